import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "api/**/*.test.ts"],
    // The recorded build, made once per run and copied by test/helpers/build-once.ts.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // A worker of a file that started servers can take long to stop on a busy 2-core machine.
    teardownTimeout: 60_000,
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
  },
});
