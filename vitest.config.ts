import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "api/**/*.test.ts"],
    // The recorded build, made once per run and copied by test/helpers/build-once.ts.
    globalSetup: ["test/global-setup.ts"],
    // One policy for every test: waits are on events (a pointer, a log line, a job state) and these are
    // only the backstops for a hang, generous enough for a 2-core machine running another CPU-heavy job.
    testTimeout: 600_000,
    hookTimeout: 900_000,
    // A worker of a file that started servers can take long to stop on a busy 2-core machine.
    teardownTimeout: 60_000,
    pool: "forks",
    // Test files share their worker's module cache (each still runs in a fork of its own pool slot):
    // importing the build and API modules afresh per file cost more than the tests (18.5 min → 11 min
    // for the suite on 2 cores). Files therefore restore what they change (env, cwd) and use their own
    // ports, schemas and temp dirs.
    isolate: false,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
