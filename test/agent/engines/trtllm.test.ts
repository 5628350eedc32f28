import { describe, expect, it } from "vitest";
import { pythonDistVersion } from "../../../agent/engines/common.js";
import { trtllm } from "../../../agent/engines/trtllm.js";
import type { Readiness } from "../../../agent/engines/types.js";
import { HOST, makeShard, PROBE, twoNodeShard } from "./shard.js";

const trt = { engine: "trtllm" } as const;

describe("trtllm.argv", () => {
  it.each([
    [
      "single node",
      makeShard({ profile: trt }),
      [
        "trtllm-serve",
        "/models/llama-3.1-70b",
        "--host",
        "0.0.0.0",
        "--port",
        "20001",
        "--tp_size",
        "4",
        "--pp_size",
        "1",
      ],
    ],
    [
      "TP-2 × PP-2 with profile args last",
      makeShard({ profile: { ...trt, tp: 2, pp: 2, args: ["--backend", "pytorch"] } }),
      [
        "trtllm-serve",
        "/models/llama-3.1-70b",
        "--host",
        "0.0.0.0",
        "--port",
        "20001",
        "--tp_size",
        "2",
        "--pp_size",
        "2",
        "--backend",
        "pytorch",
      ],
    ],
  ])("%s", (_, shard, want) => expect(trtllm.argv(shard, HOST)).toEqual(want));

  it("names the model with --served_model_name from the first release that takes it, unless the profile does", () => {
    const shard = makeShard({ profile: trt });
    const named = (version?: string, s = shard) => {
      const argv = trtllm.argv(s, { ...HOST, ...(version ? { version } : {}) });
      const at = argv.indexOf("--served_model_name");
      return at < 0 ? undefined : argv.slice(at, at + 2);
    };
    for (const v of ["1.3.0rc15", "1.3.0rc17", "1.3.0", "1.4.0rc4", "1.10.0"])
      expect(named(v), v).toEqual(["--served_model_name", "meta-llama/Llama-3.1-70B-Instruct"]);
    for (const v of ["1.3.0rc14", "1.2.1", "0.21.0", "unknown", undefined]) expect(named(v), String(v)).toBeUndefined();
    const own = makeShard({ profile: { ...trt, args: ["--served_model_name", "llama"] } });
    const argv = trtllm.argv(own, { ...HOST, version: "1.4.0" });
    expect(argv.filter((a) => a === "--served_model_name")).toHaveLength(1);
  });

  it("starts agent.yaml's program instead of trtllm-serve", () => {
    expect(trtllm.argv(makeShard({ profile: trt }), { ...HOST, command: ["/opt/trt/bin/trtllm-serve"] })[0]).toBe(
      "/opt/trt/bin/trtllm-serve",
    );
  });

  it.each([0, 1])("refuses multi-node rank %i and says why", (rank) => {
    expect(() => trtllm.argv(twoNodeShard(rank, { profile: trt }), HOST)).toThrow(/needs mpirun or Slurm/);
  });
});

describe("trtllm readiness", () => {
  it.each<[keyof typeof PROBE, Readiness]>([
    ["refused", "loading"],
    ["timeout", "loading"],
    ["ok", "ready"],
    ["unavailable", "dead"], // its executor is broken: trtllm-serve is never up while it loads
    ["internal", "dead"],
  ])("%s → %s", (probe, want) => expect(trtllm.readiness(PROBE[probe])).toBe(want));

  it("probes /health and reads the tensorrt_llm distribution's version (trtllm-serve has no --version)", () => {
    expect(trtllm.healthPath(makeShard({ profile: trt }))).toBe("/health");
    expect(trtllm.version).toEqual([pythonDistVersion("tensorrt_llm", "tensorrt-llm")]);
  });
});
