import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    reporters: ["default", "./test/helpers/summary-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // one test file per core: most of the suite's time is end-to-end tests waiting on their own processes
    maxWorkers: availableParallelism(),
    setupFiles: ["./test/helpers/setup.ts"],
    globalSetup: ["./test/helpers/build.ts"],
  },
});
