// The benches run the built CLI (dist/), as users do: a build older than the last change to the code it bundles
// measures other code than the tree's (the test suite's set-up rebuilds dist/, so a test run on a temporary edit leaves
// a build of that edit behind). Each bench that starts the CLI checks first.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../test/helpers/process.js";

/** What the build bundles: the CLI's entry and every directory of our code it imports, and the migrations it embeds. */
const BUNDLED = ["bin", "agent", "api", "shared", "migrations"];

/** The source file under `root` changed last after `builtMs` (ms since the epoch), or undefined when none was. */
export function changedSince(root: string, builtMs: number, dirs = BUNDLED): string | undefined {
  let newest: { path: string; ms: number } | undefined;
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(join(root, dir), { recursive: true, encoding: "utf8" });
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(root, dir, name);
      const st = statSync(path, { throwIfNoEntry: false });
      if (st?.isFile() && st.mtimeMs > builtMs && (!newest || st.mtimeMs > newest.ms))
        newest = { path, ms: st.mtimeMs };
    }
  }
  return newest && relative(root, newest.path);
}

/** Throws, saying what to run, when dist/llmgw.js is missing or older than a source file it bundles. */
export function requireCurrentDist(root = ROOT): void {
  const built = statSync(join(root, "dist", "llmgw.js"), { throwIfNoEntry: false });
  if (!built) throw new Error("dist/llmgw.js is missing: run `npm run build` first");
  const changed = changedSince(root, built.mtimeMs);
  if (changed)
    throw new Error(
      `dist/ was built before ${changed} last changed: run \`npm run build\` first (the bench runs the built CLI)`,
    );
}
