// Builds dist/ once before the test files run: the end-to-end tests start the built CLI, as users run it.
import { execFileSync } from "node:child_process";
import { join } from "node:path";

/** vitest's global setup. */
export default function setup() {
  execFileSync(process.execPath, [join(import.meta.dirname, "..", "..", "scripts", "build.mjs")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
}
