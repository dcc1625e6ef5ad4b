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
    fileParallelism: true,
    maxWorkers: 2,
  },
});
