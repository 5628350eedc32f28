// The build as users run it (dist/, made by the tests' global setup): stack traces name the TypeScript lines, and the
// CLI turns source maps on itself.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/process.js";

const DIST = join(ROOT, "dist");

describe("the build", () => {
  it("maps built code back to its TypeScript lines, as Node's stack traces read them", async () => {
    const chunk = readdirSync(DIST)
      .filter((f) => f.endsWith(".js"))
      .map((f) => join(DIST, f))
      .find((f) => readFileSync(f, "utf8").includes("var ApiError = class"))!;
    const line = readFileSync(chunk, "utf8")
      .split("\n")
      .findIndex((l) => l.includes("var ApiError = class"));
    const script = `import { findSourceMap } from "node:module";
import { pathToFileURL } from "node:url";
await import(pathToFileURL(process.argv[1]).href);
process.stdout.write(JSON.stringify(findSourceMap(process.argv[1]).findEntry(Number(process.argv[2]), 0)));`;
    const r = await promisify(execFile)(
      process.execPath,
      ["--enable-source-maps", "--input-type=module", "-e", script, chunk, String(line)],
      { cwd: ROOT },
    );
    const entry = JSON.parse(r.stdout) as { originalSource: string; originalLine: number };
    expect(entry.originalSource).toBe(`file://${join(ROOT, "api", "errors.ts")}`);
    const source = readFileSync(join(ROOT, "api", "errors.ts"), "utf8").split("\n");
    expect(source[entry.originalLine]).toContain("export class ApiError extends Error");
  });

  it("turns source maps on in the CLI entry, before any command's code is loaded", () => {
    const entry = readFileSync(join(DIST, "llmgw.js"), "utf8");
    expect(entry.indexOf("process.setSourceMapsEnabled(true)")).toBeGreaterThan(0);
    expect(entry.indexOf("process.setSourceMapsEnabled(true)")).toBeLessThan(entry.indexOf('import("./serve-'));
  });
});
