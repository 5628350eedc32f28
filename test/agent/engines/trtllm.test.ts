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
