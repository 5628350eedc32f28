import { describe, expect, it } from "vitest";
import { pythonDistVersion } from "../../../agent/engines/common.js";
import type { Readiness } from "../../../agent/engines/types.js";
import { vllm } from "../../../agent/engines/vllm.js";
import { HOST, makeShard, PROBE, twoNodeShard } from "./shard.js";

const COMMON = [
  "serve",
  "/models/llama-3.1-70b",
  "--host",
  "0.0.0.0",
  "--port",
  "20001",
  "--served-model-name",
  "meta-llama/Llama-3.1-70B-Instruct",
];

describe("vllm.argv", () => {
  it.each([
    ["single node", makeShard(), ["vllm", ...COMMON, "--tensor-parallel-size", "4", "--pipeline-parallel-size", "1"]],
    [
      "single node with profile args last",
      makeShard({ profile: { args: ["--max-model-len", "32768"] } }),
      ["vllm", ...COMMON, "--tensor-parallel-size", "4", "--pipeline-parallel-size", "1", "--max-model-len", "32768"],
    ],
    [
      "MIG instance",
      makeShard({ visibleDevices: "MIG-4f5e6d7c-0000-1111-2222-333344445555", deviceIds: [1001], profile: { tp: 1 } }),
      ["vllm", ...COMMON, "--tensor-parallel-size", "1", "--pipeline-parallel-size", "1"],
    ],
    [
      "multi-node rank 0 (serves the API)",
      twoNodeShard(0),
      [
        "vllm",
        ...COMMON,
        "--tensor-parallel-size",
        "4",
        "--pipeline-parallel-size",
        "2",
        "--distributed-executor-backend",
        "mp",
        "--nnodes",
        "2",
        "--node-rank",
        "0",
        "--master-addr",
        "10.0.0.11",
        "--master-port",
        "29500",
      ],
    ],
    [
      "multi-node rank 1 (headless)",
      twoNodeShard(1, { profile: { args: ["--enforce-eager"] } }),
      [
        "vllm",
        ...COMMON,
        "--tensor-parallel-size",
        "4",
        "--pipeline-parallel-size",
        "2",
        "--distributed-executor-backend",
        "mp",
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--master-addr",
        "10.0.0.11",
        "--master-port",
        "29500",
        "--headless",
        "--enforce-eager",
      ],
    ],
  ])("%s", (_, shard, want) => expect(vllm.argv(shard, HOST)).toEqual(want));

  it("starts agent.yaml's program instead of `vllm`", () => {
    expect(vllm.argv(makeShard(), { ...HOST, command: ["/opt/venv/bin/vllm"] }).slice(0, 3)).toEqual([
      "/opt/venv/bin/vllm",
      "serve",
      "/models/llama-3.1-70b",
    ]);
  });
});

describe("vllm.healthPath", () => {
  it.each([
    ["single node", makeShard(), "/health"],
    ["multi-node rank 0", twoNodeShard(0), "/health"],
    ["multi-node rank 1 (headless, no HTTP)", twoNodeShard(1), null],
  ])("%s", (_, shard, want) => expect(vllm.healthPath(shard)).toBe(want));
});

describe("vllm.readiness", () => {
  it.each<[keyof typeof PROBE, Readiness]>([
    ["refused", "loading"],
    ["timeout", "loading"],
    ["ok", "ready"],
    ["unavailable", "dead"],
    ["internal", "dead"],
    ["notFound", "dead"],
  ])("%s → %s", (probe, want) => expect(vllm.readiness(PROBE[probe])).toBe(want));

  it("reads its distribution's version, then asks the (slow) CLI", () =>
    expect(vllm.version).toEqual([pythonDistVersion("vllm"), ["vllm", "--version"]]));
});
