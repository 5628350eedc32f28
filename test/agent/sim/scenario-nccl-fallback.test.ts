// A scenario node's `nccl_fallback`: parsed, refused when it names another fallback, and carried through its agent's
// environment to the engines it starts, whose NCCL lines then show the socket fallback despite placement's HCAs.
import { describe, expect, it } from "vitest";
import { command } from "../../../agent/engines/command.js";
import { shardEnv } from "../../../agent/engines/env.js";
import { parseNcclLog } from "../../../agent/nccl/parse.js";
import { judgeTransport } from "../../../agent/nccl/verdict.js";
import { ncclInitLines } from "../../../agent/sim/nccl-lines.js";
import { agentSettings, DEFAULT_SCENARIO, loadScenario, parseScenario } from "../../../agent/sim/scenario.js";
import { ibEnv } from "../../../api/placement/ib.js";
import { HOST, twoNodeShard } from "../engines/shard.js";

const TWO_L40S = `nodes:
  - { id: l40s-1, kind: l40s, uuid_prefix: d001, ib_fabric: ib-demo }
  - { id: l40s-2, kind: l40s, uuid_prefix: d002, ib_fabric: ib-demo, nccl_fallback: socket }
`;

describe("scenario key nccl_fallback", () => {
  it("is read per node and put in that node's agent environment only", () => {
    const s = parseScenario(TWO_L40S, "two.yaml");
    expect(s.nodes.map((n) => n.nccl_fallback)).toEqual([undefined, "socket"]);
    expect(agentSettings("/sim", s.nodes[0]!).env).toEqual({ FAKE_SIM_DIR: "/sim/sim-l40s-1" });
    expect(agentSettings("/sim", s.nodes[1]!).env).toEqual({
      FAKE_SIM_DIR: "/sim/sim-l40s-2",
      LLMGW_SIM_NCCL_FALLBACK: "socket",
    });
  });

  it("refuses any other value, naming the node's key and what it may be", () => {
    const bad =
      "nodes:\n  - { id: a, kind: l40s, uuid_prefix: '0001', nccl_fallback: tcp }\n" +
      "  - { id: b, kind: l40s, uuid_prefix: '0002', nccl_fallback: true }\n";
    expect(() => parseScenario(bad, "bad.yaml")).toThrow(
      'bad.yaml: invalid scenario:\n  nodes.0.nccl_fallback: must be socket (the one fallback simulated), not "tcp"\n' +
        "  nodes.1.nccl_fallback: must be socket (the one fallback simulated), not true",
    );
  });

  it("reaches the engine: the agent's environment plus the shard's, judged degraded on IB; the other node ok", () => {
    const s = parseScenario(TWO_L40S, "two.yaml");
    const verdicts = s.nodes.map((node, rank) => {
      const shard = twoNodeShard(rank, {
        fabric: "ib:ib-demo",
        deviceIds: [0],
        visibleDevices: "0",
        env: ibEnv(["mlx5_0", "mlx5_1"]),
        profile: { engine: "command", args: ["mock", "--port", "{port}"], tp: 2, pp: 1, gpusPerNode: 1 },
      });
      // spawnEngine adds the shard's variables to the agent's own environment
      const env = { ...agentSettings("/sim", node).env, ...shardEnv(shard, command, HOST) };
      const lines = ncclInitLines(env, node.id, 100 + rank).join("\n");
      return judgeTransport({ fabric: shard.fabric, hcas: shard.hcas }, parseNcclLog(lines), true);
    });
    expect(verdicts.map((t) => [t?.verdict, t?.via])).toEqual([
      ["ok", "NET/IB"],
      ["degraded", "NET/Socket"],
    ]);
    expect(verdicts[1]?.reason).toBe("placed on ib:ib-demo (mlx5_0,mlx5_1); NCCL uses NET/Socket on eth0");
  });

  it("shows in the default demo scenario: one L40S falls back, and its deployment is served degraded", () => {
    const s = loadScenario(DEFAULT_SCENARIO);
    expect(s.nodes.filter((n) => n.nccl_fallback).map((n) => [n.id, n.nccl_fallback])).toEqual([["l40s-2", "socket"]]);
    expect(s.models.find((m) => m.name === "demo-ib")?.transport).toBe("prefer");
  });
});
