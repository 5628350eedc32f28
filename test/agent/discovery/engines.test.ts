import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_PROBES, type EngineProbe, probeEngines, versionFrom } from "../../../agent/discovery/engines.js";
import { type Runner, type RunResult, runnerWith } from "../../../agent/discovery/exec.js";
import { engines } from "../../../agent/engines/index.js";

describe("versionFrom", () => {
  it.each([
    ["vllm --version", "0.11.0\n", "0.11.0"],
    ["vllm post release", "0.6.3.post1\n", "0.6.3.post1"],
    ["vllm dev build", "0.11.1.dev123+g1234abc.d20251001\n", "0.11.1.dev123+g1234abc.d20251001"],
    ["vllm local version", "0.10.2+cu128\n", "0.10.2+cu128"],
    ["four-part version", "0.10.1.1\n", "0.10.1.1"],
    ["trtllm-serve", "[TensorRT-LLM] TensorRT-LLM version: 1.0.0\n", "1.0.0"],
    ["llama.cpp build line alone", "version: 6123 (a1b2c3d4)\n", "6123"],
    ["llama.cpp release tag", "llama-server b6123\n", "b6123"],
    [
      "llama.cpp with its compiler line",
      "version: 6123 (a1b2c3d4)\nbuilt with cc (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0 for x86_64-linux-gnu\n",
      "6123",
    ],
    ["SGLang release candidate", "0.5.2rc1\n", "0.5.2rc1"],
    ["TensorRT-LLM release candidate", "[TensorRT-LLM] TensorRT-LLM version: 1.1.0rc5\n", "1.1.0rc5"],
  ])("%s", (_, output, want) => expect(versionFrom(output)).toBe(want));

  it("finds nothing in output without a version", () => {
    expect(versionFrom("")).toBeUndefined();
    expect(versionFrom("usage: vllm [-h] {serve,chat,complete}\n")).toBeUndefined();
  });
});

type Call = { cmd: string; args: string[]; timeoutMs: number };

/** A Runner that answers from a table keyed by command, and records every call. */
function fakeRunner(answers: Record<string, RunResult>): { run: Runner; calls: Call[] } {
  const calls: Call[] = [];
  const run: Runner = async (cmd, args, timeoutMs) => {
    calls.push({ cmd, args, timeoutMs });
    return answers[cmd] ?? { ok: false, missing: true, error: `${cmd}: not found (is it installed and on PATH?)` };
  };
  return { run, calls };
}

describe("DEFAULT_PROBES", () => {
  it("are the adapters' own version commands, in registry order; the command engine has none", () => {
    expect(DEFAULT_PROBES.map((p) => p.engine)).toEqual(["vllm", "vllm", "sglang", "llamacpp", "trtllm"]);
    const ofEngine = (e: string) => DEFAULT_PROBES.filter((p) => p.engine === e).map((p) => p.command);
    for (const e of ["vllm", "sglang", "llamacpp", "trtllm"] as const) expect(ofEngine(e)).toEqual(engines[e].version);
    expect("version" in engines.command).toBe(false);
  });

  it("never ask trtllm-serve for --version, and read Python engines from their distribution first", () => {
    expect(DEFAULT_PROBES.some((p) => p.command.join(" ").startsWith("trtllm-serve"))).toBe(false);
    for (const e of ["vllm", "sglang", "trtllm"])
      expect(DEFAULT_PROBES.find((p) => p.engine === e)!.command.slice(0, 2)).toEqual(["python3", "-c"]);
  });
});

const BIN = join(import.meta.dirname, "../../fixtures/engines");
/** The real runner, with the fake engine CLIs of test/fixtures/engines first on PATH. */
const fakeClis = (env: Record<string, string>) => runnerWith({ PATH: `${BIN}:${process.env.PATH}`, ...env });

describe("probeEngines against CLIs that behave like the real ones", () => {
  it("finds TensorRT-LLM, whose trtllm-serve refuses --version, from its distribution", async () => {
    const run = fakeClis({ FAKE_PY_DISTS: "tensorrt_llm=1.3.0rc15", FAKE_VLLM_ABSENT: "1" });
    const refused = await run("trtllm-serve", ["--version"], 5000);
    expect(refused).toMatchObject({ ok: false, error: expect.stringContaining("exited with status 2") });
    const got = await probeEngines(DEFAULT_PROBES, run, 5000);
    expect(got.versions).toEqual({ trtllm: "1.3.0rc15" });
  });

  it("reads vLLM from its distribution without starting the slow CLI", async () => {
    const run = fakeClis({ FAKE_PY_DISTS: "vllm=0.29.0 sglang=0.5.19", FAKE_VLLM_DELAY_S: "30" });
    const got = await probeEngines(DEFAULT_PROBES, run, 2000);
    expect(got).toEqual({
      probed: ["vllm", "sglang", "llamacpp", "trtllm"],
      versions: { sglang: "0.5.19", vllm: "0.29.0" },
    });
  });

  it("warns, instead of saying absent, when the only probe that could answer runs out of time", async () => {
    // vllm installed where python3 does not see it (pipx, a venv): only its slow CLI can tell
    const run = fakeClis({ FAKE_PY_DISTS: "", FAKE_VLLM_DELAY_S: "30" });
    const got = await probeEngines(DEFAULT_PROBES, run, 500);
    expect(got.versions).toEqual({});
    expect(Object.keys(got.warnings ?? {})).toEqual(["vllm"]);
    expect(got.warnings!.vllm).toMatch(/^no answer within 0\.5 s from vllm --version: vllm may be installed;/);
    expect(got.warnings!.vllm).toContain("engines.vllm.probe");
  });
});

describe("probeEngines", () => {
  it("reports the version of each engine that answers and probes them all", async () => {
    const { run } = fakeRunner({
      vllm: { ok: true, stdout: "0.11.0\n", stderr: "" },
      "llama-server": { ok: true, stdout: "", stderr: "version: 6123 (a1b2c3d4)\n" },
    });
    const got = await probeEngines(DEFAULT_PROBES, run, 4321);
    expect(got).toEqual({
      probed: ["vllm", "sglang", "llamacpp", "trtllm"],
      versions: { vllm: "0.11.0", llamacpp: "6123" },
    });
  });

  it("tries an engine's probes in order until one answers, with the given timeout", async () => {
    const { run, calls } = fakeRunner({ vllm: { ok: true, stdout: "0.11.0\n", stderr: "" } });
    await probeEngines(DEFAULT_PROBES.slice(0, 2), run, 4321);
    expect(calls.map((c) => [c.cmd, c.args.at(-1), c.timeoutMs])).toEqual([
      ["python3", "vllm", 4321],
      ["vllm", "--version", 4321],
    ]);
  });

  it("runs at most two engines' probes at once", async () => {
    let running = 0;
    let most = 0;
    const run: Runner = async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 20));
      running--;
      return { ok: false, missing: true, error: "not found" };
    };
    await probeEngines(DEFAULT_PROBES, run, 1000);
    expect(most).toBe(2);
  });

  it("reads the version from stderr when stdout is empty", async () => {
    const { run } = fakeRunner({ "llama-server": { ok: true, stdout: "", stderr: "version: 6123 (a1b2c3d4)\n" } });
    const got = await probeEngines([{ engine: "llamacpp", command: ["llama-server", "--version"] }], run, 1000);
    expect(got.versions).toEqual({ llamacpp: "6123" });
  });

  it("prefers stdout over stderr", async () => {
    const { run } = fakeRunner({
      vllm: {
        ok: true,
        stdout: "0.11.0\n",
        stderr: "/usr/lib/python3.12/site-packages/x.py:1: FutureWarning: 9.9.9\n",
      },
    });
    const got = await probeEngines([{ engine: "vllm", command: ["vllm", "--version"] }], run, 1000);
    expect(got.versions).toEqual({ vllm: "0.11.0" });
  });

  it("calls an engine that answers without a version `unknown`", async () => {
    const { run } = fakeRunner({ mock: { ok: true, stdout: "ready\n", stderr: "" } });
    const got = await probeEngines([{ engine: "mock", command: ["mock"] }], run, 1000);
    expect(got).toEqual({ probed: ["mock"], versions: { mock: "unknown" } });
  });

  it("leaves engines whose probe failed (missing, timed out, non-zero exit) out of versions but in probed", async () => {
    const probes: EngineProbe[] = [
      { engine: "a", command: ["a"] },
      { engine: "b", command: ["b", "--version"] },
      { engine: "c", command: ["c"] },
      { engine: "d", command: ["d"] },
    ];
    const { run } = fakeRunner({
      b: { ok: false, missing: false, timedOut: true, error: "b --version: no answer within 1000 ms" },
      c: { ok: false, missing: false, error: "c: exited with status 1: ModuleNotFoundError: No module named 'sglang'" },
      d: { ok: true, stdout: "2.0.1\n", stderr: "" },
    });
    expect(await probeEngines(probes, run, 1000)).toEqual({
      probed: ["a", "b", "c", "d"],
      versions: { d: "2.0.1" },
      warnings: { b: expect.stringMatching(/^no answer within 1 s from b --version: b may be installed/) },
    });
  });

  it("returns nothing probed for no probes", async () => {
    const { run, calls } = fakeRunner({});
    expect(await probeEngines([], run, 1000)).toEqual({ probed: [], versions: {} });
    expect(calls).toEqual([]);
  });
});
