import { describe, expect, it } from "vitest";
import { DEFAULT_PROBES, type EngineProbe, probeEngines, versionFrom } from "../../../agent/discovery/engines.js";
import type { Runner, RunResult } from "../../../agent/discovery/exec.js";
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
    expect(DEFAULT_PROBES).toEqual([
      { engine: "vllm", command: engines.vllm.version },
      { engine: "sglang", command: engines.sglang.version },
      { engine: "llamacpp", command: engines.llamacpp.version },
      { engine: "trtllm", command: engines.trtllm.version },
    ]);
    expect("version" in engines.command).toBe(false);
  });
});

describe("probeEngines", () => {
  it("reports the version of each engine that answers and probes them all", async () => {
    const { run } = fakeRunner({
      vllm: { ok: true, stdout: "0.11.0\n", stderr: "" },
      python3: { ok: true, stdout: "0.5.2\n", stderr: "" },
      "trtllm-serve": { ok: true, stdout: "", stderr: "[TensorRT-LLM] TensorRT-LLM version: 1.0.0\n" },
    });
    const got = await probeEngines(DEFAULT_PROBES, run, 4321);
    expect(got).toEqual({
      probed: ["vllm", "sglang", "llamacpp", "trtllm"],
      versions: { vllm: "0.11.0", sglang: "0.5.2", trtllm: "1.0.0" },
    });
    expect("llamacpp" in got.versions).toBe(false);
  });

  it("runs each probe's command with its arguments and the given timeout", async () => {
    const { run, calls } = fakeRunner({});
    await probeEngines(DEFAULT_PROBES, run, 4321);
    expect(calls).toEqual([
      { cmd: "vllm", args: ["--version"], timeoutMs: 4321 },
      { cmd: "python3", args: ["-c", "import sglang; print(sglang.__version__)"], timeoutMs: 4321 },
      { cmd: "llama-server", args: ["--version"], timeoutMs: 4321 },
      { cmd: "trtllm-serve", args: ["--version"], timeoutMs: 4321 },
    ]);
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
      b: { ok: false, missing: false, error: "b --version: no answer within 1000 ms" },
      c: { ok: false, missing: false, error: "c: exited with status 1: ModuleNotFoundError: No module named 'sglang'" },
      d: { ok: true, stdout: "2.0.1\n", stderr: "" },
    });
    expect(await probeEngines(probes, run, 1000)).toEqual({ probed: ["a", "b", "c", "d"], versions: { d: "2.0.1" } });
  });

  it("returns nothing probed for no probes", async () => {
    const { run, calls } = fakeRunner({});
    expect(await probeEngines([], run, 1000)).toEqual({ probed: [], versions: {} });
    expect(calls).toEqual([]);
  });
});
