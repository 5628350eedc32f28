import { describe, expect, it } from "vitest";
import { pythonDistVersion } from "../../../agent/engines/common.js";
import { sglang } from "../../../agent/engines/sglang.js";
import type { Readiness } from "../../../agent/engines/types.js";
import { HOST, makeShard, PROBE, twoNodeShard } from "./shard.js";

const PROGRAM = ["python3", "-m", "sglang.launch_server"];
const COMMON = [
  "--model-path",
  "/models/llama-3.1-70b",
  "--host",
  "0.0.0.0",
  "--port",
  "20001",
  "--served-model-name",
  "meta-llama/Llama-3.1-70B-Instruct",
  "--enable-metrics",
];
const sg = { engine: "sglang" } as const;

describe("sglang.argv", () => {
  it.each([
    ["single node", makeShard({ profile: sg }), [...PROGRAM, ...COMMON, "--tp-size", "4", "--pp-size", "1"]],
    [
      "MIG instance",
      makeShard({
        visibleDevices: "MIG-4f5e6d7c-0000-1111-2222-333344445555",
        deviceIds: [1001],
        profile: { ...sg, tp: 1 },
      }),
      [...PROGRAM, ...COMMON, "--tp-size", "1", "--pp-size", "1"],
    ],
    [
      "multi-node rank 0",
      twoNodeShard(0, { profile: { ...sg, args: ["--mem-fraction-static", "0.85"] } }),
      [
        ...PROGRAM,
        ...COMMON,
        "--tp-size",
        "4",
        "--pp-size",
        "2",
        "--nnodes",
        "2",
        "--node-rank",
        "0",
        "--dist-init-addr",
        "10.0.0.11:29500",
        "--mem-fraction-static",
        "0.85",
      ],
    ],
    [
      "multi-node rank 1",
      twoNodeShard(1, { profile: sg }),
      [
        ...PROGRAM,
        ...COMMON,
        "--tp-size",
        "4",
        "--pp-size",
        "2",
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--dist-init-addr",
        "10.0.0.11:29500",
      ],
    ],
    [
      "multi-node with an IPv6 leader",
      twoNodeShard(1, { leaderAddr: "fd00::11", profile: sg }),
      [
        ...PROGRAM,
        ...COMMON,
        "--tp-size",
        "4",
        "--pp-size",
        "2",
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--dist-init-addr",
        "[fd00::11]:29500",
      ],
    ],
  ])("%s", (_, shard, want) => expect(sglang.argv(shard, HOST)).toEqual(want));

  it("gives DP attention on one node the leader port as --dist-init-addr, so its TCP ports are the ones placement held", () => {
    const args = ["--enable-dp-attention", "--dp-size", "4"];
    const argv = sglang.argv(makeShard({ leaderPort: 20002, profile: { ...sg, args } }), HOST);
    expect(argv.slice(COMMON.length + PROGRAM.length)).toEqual([
      "--tp-size",
      "4",
      "--pp-size",
      "1",
      "--dist-init-addr",
      "127.0.0.1:20002",
      ...args,
    ]);
    // across nodes the leader's address already carries it
    const multi = sglang.argv(twoNodeShard(0, { profile: { ...sg, args } }), HOST);
    expect(multi.filter((a) => a === "--dist-init-addr")).toHaveLength(1);
    expect(multi[multi.indexOf("--dist-init-addr") + 1]).toBe("10.0.0.11:29500");
  });

  it("starts agent.yaml's program instead of python3 -m sglang.launch_server", () => {
    const o = { ...HOST, command: ["/opt/venv/bin/python", "-m", "sglang.launch_server"] };
    expect(sglang.argv(makeShard({ profile: sg }), o).slice(0, 5)).toEqual([
      "/opt/venv/bin/python",
      "-m",
      "sglang.launch_server",
      "--model-path",
      "/models/llama-3.1-70b",
    ]);
  });
});

describe("sglang.healthPath", () => {
  it.each([
    ["single node", makeShard({ profile: sg })],
    ["multi-node rank 0", twoNodeShard(0, { profile: sg })],
    ["multi-node rank 1 (SGLang's dummy health server)", twoNodeShard(1, { profile: sg })],
  ])("%s probes /health", (_, shard) => expect(sglang.healthPath(shard)).toBe("/health"));
});

describe("sglang.readiness", () => {
  it.each<[keyof typeof PROBE, Readiness]>([
    ["refused", "loading"],
    ["timeout", "loading"],
    ["ok", "ready"],
    ["unavailable", "loading"],
    ["internal", "dead"],
    ["notFound", "dead"],
  ])("%s → %s", (probe, want) => expect(sglang.readiness(PROBE[probe])).toBe(want));

  it("reads sglang's version from its distribution's metadata, not by importing it", () =>
    expect(sglang.version).toEqual([pythonDistVersion("sglang")]));
});
