// Ports an engine binds itself (SGLang with DP attention): placement holds them for rank 0 and never hands them on.
import { describe, expect, it } from "vitest";
import { plan } from "../../api/placement/plan.js";
import type { PlaceNode, Replica, Shard } from "../../api/placement/types.js";
import { deployment, hgx, input, model, nvl72, profile } from "./builders.js";

const DP_ATTENTION = ["--enable-dp-attention", "--dp-size", "4"];
const sglang = (args: string[], gpusPerNode = 4, nodes = 1) =>
  model("ds", [profile("dp", "h100-80g", gpusPerNode, nodes, { engine: "sglang", args })]);
const run = (nodes: PlaceNode[], replicas: number, m = sglang(DP_ATTENTION), existing: Replica[] = []) =>
  plan(input({ nodes, models: [m], deployments: [deployment("ds", m.name, replicas)], replicas: existing }));
const portsOf = (s: Shard) => [s.httpPort, ...(s.rank === 0 ? [s.leaderPort, ...(s.enginePorts ?? [])] : [])];

describe("engine ports", () => {
  it("holds leader + 1…6 and + 13 for SGLang with DP attention, and the next replica's ports avoid them", () => {
    const p = run([hgx("gpu-a")], 2);
    const [a, b] = p.assign.map((r) => r.shards[0]!);
    expect([a!.httpPort, a!.leaderPort, a!.enginePorts]).toEqual([
      8000,
      8001,
      [8002, 8003, 8004, 8005, 8006, 8007, 8014],
    ]);
    for (const s of [a!, b!]) expect(s.enginePorts).toEqual([1, 2, 3, 4, 5, 6, 13].map((o) => s.leaderPort + o));
    const all = [...portsOf(a!), ...portsOf(b!)];
    expect(new Set(all).size).toBe(all.length);
    // the second takes the lowest free http port; its leader is the first whose own ports are all free
    expect([b!.httpPort, b!.leaderPort]).toEqual([8008, 8015]);
  });

  it("takes only http and leader for SGLang without DP attention, and for vLLM", () => {
    for (const m of [sglang(["--mem-fraction-static", "0.85"]), model("v", [profile("tp4", "h100-80g", 4)])]) {
      const [a, b] = run([hgx("gpu-a")], 2, m).assign.map((r) => r.shards[0]!);
      expect([a!.httpPort, a!.leaderPort, a!.enginePorts, b!.httpPort, b!.leaderPort]).toEqual([
        8000,
        8001,
        undefined,
        8002,
        8003,
      ]);
    }
  });

  it("keeps the ports an existing replica's engine holds out of a new one", () => {
    const p = run([hgx("gpu-a")], 1, sglang(DP_ATTENTION));
    const vllm = model("v", [profile("tp4", "h100-80g", 4)]);
    const next = plan(
      input({ nodes: [hgx("gpu-a")], models: [vllm], deployments: [deployment("v", "v", 1)], replicas: p.assign }),
    );
    expect(next.assign.map((r) => [r.shards[0]!.httpPort, r.shards[0]!.leaderPort])).toEqual([[8008, 8009]]);
  });

  it("says why when a node's range has no room for the engine's ports", () => {
    const small = hgx("gpu-a", { portRange: { first: 9000, last: 9010 } });
    const p = run([small], 1);
    expect(p.assign).toEqual([]);
    expect(p.pending[0]!.reason).toContain(
      "node gpu-a has no free port in 9000-9010 for a leader (sglang with --enable-dp-attention also binds the leader port + 1…6 and + 13)",
    );
    // a range just wide enough places it
    const wide = hgx("gpu-a", { portRange: { first: 9000, last: 9014 } });
    expect(run([wide], 1).assign[0]!.shards[0]!.enginePorts).toEqual([9002, 9003, 9004, 9005, 9006, 9007, 9014]);
  });

  it("holds them on rank 0's node only across nodes", () => {
    const m = model("ds", [profile("dp", "gb200-185g", 4, 2, { engine: "sglang", args: DP_ATTENTION })]);
    const r = run(nvl72(2), 1, m).assign[0]!;
    expect(r.shards.map((s) => s.enginePorts)).toEqual([[8002, 8003, 8004, 8005, 8006, 8007, 8014], undefined]);
  });
});
