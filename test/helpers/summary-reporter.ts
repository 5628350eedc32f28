// Prints `N passed, N failed` as the very last line of a run, the line CI reads (vitest's own summary is not one line).
import type { Reporter, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = errors.length;
    let skipped = 0;
    for (const m of modules) {
      let failedHere = 0;
      for (const t of m.children.allTests()) {
        const s = t.result().state;
        if (s === "passed") passed++;
        else if (s === "failed") failedHere++;
        else skipped++;
      }
      // a file that failed outside its tests (an import, a beforeAll) counts once, even when its tests were skipped
      failed += failedHere || (m.state() === "failed" ? 1 : 0);
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
  }
}
