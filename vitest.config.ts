import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Two lanes: `unit` (pure logic and in-process API tests: `npm run test:unit`, well under a minute) and `e2e` (real
// processes, the built CLI, browsers, sqld, wrangler). `npm test` runs both.
const lane = {
  pool: "forks" as const,
  testTimeout: 30_000,
  hookTimeout: 60_000,
  setupFiles: ["./test/helpers/setup.ts"],
};

export default defineConfig({
  test: {
    reporters: ["default", "./test/helpers/summary-reporter.ts"],
    // one test file per core: most of the suite's time is end-to-end tests waiting on their own processes
    maxWorkers: availableParallelism(),
    // builds dist/ once for whichever lanes run (the end-to-end tests, and a few unit tests, start the built CLI)
    globalSetup: ["./test/helpers/build.ts"],
    projects: [
      // the unit lane shares one module cache per worker thread (isolate: false): its files hold no state of their own
      // between tests, and importing hono, drizzle and zod once instead of per file makes the lane 3× faster
      {
        test: {
          ...lane,
          pool: "threads",
          isolate: false,
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**"],
        },
      },
      { test: { ...lane, name: "e2e", include: ["test/e2e/**/*.test.ts"] } },
    ],
  },
});
