// The single executable for GPU nodes (`npm run build:binary`), built afresh and copied into a directory away from the
// checkout with only the fake nvidia-smi and its captures beside it: no Node.js install, npm or checkout is used.
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_SMI, HGX_SMI, IB_ROOT } from "../helpers/agents.js";
import { tempDir } from "../helpers/db.js";
import { ROOT, start } from "../helpers/process.js";

const tmp = tempDir("llmgw-binary-");
const node = join(tmp.dir, "node");
const binary = join(node, "llmgw");
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
afterAll(() => tmp.cleanup());

/** The fake nvidia-smi and the HGX H100 captures it answers from, copied beside the binary. */
const smiEnv: Record<string, string> = {};
beforeAll(async () => {
  const out = join(tmp.dir, "build");
  const built = await promisify(execFile)(
    process.execPath,
    [join(ROOT, "scripts", "build-binary.mjs"), "--outdir", out],
    { cwd: ROOT },
  );
  const made = built.stdout.match(/^built (\S+)/m)![1]!;
  mkdirSync(node);
  copyFileSync(made, binary);
  copyFileSync(FAKE_SMI, join(node, "nvidia-smi"));
  for (const [name, path] of Object.entries(HGX_SMI)) {
    copyFileSync(path, join(node, `${name}.txt`));
    smiEnv[name] = join(node, `${name}.txt`);
  }
}, 120_000);

/** Runs the binary in its directory with a PATH holding no node. */
async function llmgw(args: string[]) {
  const p = start(binary, args, { cwd: node, env: { ...smiEnv, PATH: "/usr/bin:/bin" } });
  const code = await p.exited;
  return { code, output: p.output() };
}

describe("the single binary", () => {
  it("is a Node single executable that prints its version", async () => {
    const r = await llmgw(["--version"]);
    expect(r.code).toBe(0);
    expect(r.output.trim()).toMatch(
      new RegExp(`^${version.replace(/\./g, "\\.")}( \\(commit [0-9a-f]{12}(-dirty)?\\))?$`),
    );
  });

  it("runs agent inventory --json against nvidia-smi", async () => {
    const r = await llmgw(["agent", "inventory", "--json", "--nvidia-smi", "./nvidia-smi", "--ib-root", IB_ROOT]);
    expect(r.code, r.output).toBe(0);
    const inv = JSON.parse(r.output) as {
      gpuSource: string;
      gpus: { class: string }[];
      hcas: unknown[];
      errors: unknown[];
    };
    expect(inv.gpuSource).toBe("nvidia-smi");
    expect(inv.gpus.map((g) => g.class)).toEqual(Array(8).fill("h100-80g"));
    expect(inv.hcas.length).toBeGreaterThan(0);
  });

  it("says plainly that NVML needs the package install and reads the GPUs with nvidia-smi", async () => {
    const r = await llmgw(["agent", "inventory", "--json", "--nvml", "--nvidia-smi", "./nvidia-smi"]);
    expect(r.code, r.output).toBe(0);
    const inv = JSON.parse(r.output) as {
      gpuSource: string;
      gpus: unknown[];
      errors: { source: string; message: string }[];
    };
    expect(inv.gpuSource).toBe("nvidia-smi");
    expect(inv.gpus).toHaveLength(8);
    expect(inv.errors.find((e) => e.source === "nvml")?.message).toMatch(
      /^NVML needs the npm package install of llmgw.*read the GPUs with nvidia-smi instead$/,
    );
  });

  it("runs doctor --json", async () => {
    const r = await llmgw(["doctor", "--json", "--nvidia-smi", "./nvidia-smi", "--ib-root", IB_ROOT]);
    expect(r.code, r.output).toBe(0);
    const d = JSON.parse(r.output) as {
      checks: { id: string; status: string; finding: string }[];
      summary: { fail: number };
    };
    const check = (id: string) => d.checks.find((c) => c.id === id)!;
    expect(check("driver")).toMatchObject({
      status: "ok",
      finding: "driver 580.105.08 (CUDA 13.0): 8 GPUs via nvidia-smi",
    });
    expect(check("nvml").finding).toContain("NVML needs the npm package install of llmgw");
    expect(check("ib-ports").status).toBe("ok");
    expect(d.summary.fail).toBe(0);
  });

  it("refuses what needs the package's files or native database, saying what to do instead", async () => {
    const serve = await llmgw(["serve", "--port", "0", "--db", join(tmp.dir, "x.db")]);
    expect(serve.code).toBe(1);
    expect(serve.output).toContain("the embedded database file needs the npm package install of llmgw");
    expect(serve.output).toContain("point --db at a libSQL server");
    for (const args of [
      ["demo", "--port", "0"],
      ["migrate", "--db", join(tmp.dir, "x.db")],
    ]) {
      const r = await llmgw(args);
      expect(r.code).toBe(2);
      expect(r.output).toMatch(new RegExp(`^llmgw ${args[0]} needs the npm package install of llmgw`));
    }
  });
});
