// The package as a user gets it: `npm pack` of the build, installed globally into a temporary prefix, run from a
// directory outside any checkout — `llmgw --version`, `agent inventory`, and the whole demo from the packaged
// scenario and captures.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { ROOT, start } from "../helpers/process.js";

const run = promisify(execFile);
const tmp = tempDir("llmgw-package-");
const prefix = join(tmp.dir, "prefix");
const elsewhere = join(tmp.dir, "elsewhere");
const llmgw = join(prefix, "bin", "llmgw");
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
afterAll(() => tmp.cleanup());

/** Runs the installed `llmgw` from `elsewhere` with only the prefix's bin and node on PATH. */
const installed = (args: string[], env: Record<string, string> = {}) =>
  start(llmgw, args, {
    cwd: elsewhere,
    env: { PATH: `${join(prefix, "bin")}:${join(process.execPath, "..")}:/usr/bin:/bin`, ...env },
  });

beforeAll(async () => {
  mkdirSync(elsewhere, { recursive: true });
  // dist/ is built by the tests' global setup; packing must not rebuild it under the other test files' feet
  const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp.dir], { cwd: ROOT });
  const tarball = join(tmp.dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  await run(
    "npm",
    ["install", "--global", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", tarball],
    { cwd: elsewhere, timeout: 240_000 },
  );
}, 300_000);

describe("the installed package", () => {
  it("prints its version, with the commit it was built from in a checkout", async () => {
    const p = installed(["--version"]);
    expect(await p.exited).toBe(0);
    expect(p.output().trim()).toMatch(
      new RegExp(`^${version.replace(/\./g, "\\.")}( \\(commit [0-9a-f]{12}(-dirty)?\\))?$`),
    );
  });

  it("runs agent inventory from any directory", async () => {
    const p = installed(["agent", "inventory", "--json", "--no-gpu", "--ib-root", join(tmp.dir, "no-ib")]);
    expect(await p.exited).toBe(0);
    const inventory = JSON.parse(p.output()) as { gpus: unknown[]; hcas: unknown[] };
    expect(inventory.gpus).toEqual([]);
    expect(inventory.hcas).toEqual([]);
  });

  it("runs the demo from the packaged scenario and captures: every replica ready, then it stops", async () => {
    const p = installed(["demo", "--port", "0", "--exit-when-ready", "--timeout", "150"]);
    const code = await p.exited;
    expect(code, p.output()).toBe(0);
    expect(p.output()).toMatch(/console: +http:\/\/127\.0\.0\.1:\d+\/admin/);
    expect(p.output()).toContain("Stopping now (--exit-when-ready).");
  }, 200_000);
});
