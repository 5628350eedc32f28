// Multi-node placement: NVLink domains first, InfiniBand fallback, gangs never partial.
import { describe, expect, it } from "vitest";
import { plan } from "../../api/placement/plan.js";
import type { PlaceNode } from "../../api/placement/types.js";
import { DOMAIN, deployment, fabric, gb200Tray, hgx, input, model, nvl72, OTHER_DOMAIN, profile } from "./builders.js";

const big = model("big", [profile("nvl", "gb200-185g", 4, 2)]);
const out = (n: PlaceNode, reasons: string[]): PlaceNode => ({
  ...n,
  nvlink: { ...n.nvlink, eligible: false, reasons },
});
const nodesOf = (p: ReturnType<typeof plan>) => p.assign.map((r) => r.shards.map((s) => s.nodeId));

describe("multi-node placement", () => {
  const cases: {
    name: string;
    nodes: PlaceNode[];
    replicas: number;
    placed: string[][];
    fabric?: string;
    reason?: RegExp;
  }[] = [
    {
      name: "a domain with one tray out still places a 2-node replica on two other trays",
      nodes: nvl72(4).map((n, i) => (i === 0 ? out(n, ["GPU 2 fabric In Progress"]) : n)),
      replicas: 2,
      placed: [["gb-t01", "gb-t02"]],
      fabric: `nvlink:${DOMAIN}`,
      reason:
        /^needs 2 nodes with 4 free gb200-185g in one NVLink domain; domain 9f3e….2 has 1 eligible: tray 0 GPU 2 fabric In Progress, 2 trays have fewer than 4 free; no InfiniBand fabric has 2 nodes with 4 free gb200-185g$/,
    },
    {
      name: "every tray out because IMEX is down: InfiniBand fallback",
      nodes: nvl72(2, { ib: true }).map((n) => out(n, ["IMEX down"])),
      replicas: 1,
      placed: [["gb-t00", "gb-t01"]],
      fabric: "ib:ib-gb",
    },
    {
      name: "HGX nodes with a zero cluster UUID are never used over NVLink, even if marked eligible",
      nodes: [hgx("h-a", { nvlink: { eligible: true, reasons: [], degraded: false } }), hgx("h-b")],
      replicas: 1,
      placed: [],
      reason:
        /no node in pool prod with h100-80g is in an NVLink domain; no InfiniBand fabric has 2 nodes with 8 free h100-80g$/,
    },
    {
      name: "a degraded domain is chosen last",
      nodes: [
        ...nvl72(2, { prefix: "deg", domain: OTHER_DOMAIN }).map((n) => ({
          ...n,
          nvlink: { ...n.nvlink, degraded: true },
        })),
        ...nvl72(3, { prefix: "ok" }),
      ],
      replicas: 2,
      placed: [
        ["ok-t00", "ok-t01"],
        ["deg-t00", "deg-t01"],
      ],
    },
    {
      name: "a gang is never partial",
      nodes: [...nvl72(3), gb200Tray("solo", 0, { nvlink: { domain: OTHER_DOMAIN } })],
      replicas: 2,
      placed: [["gb-t00", "gb-t01"]],
      reason: /domain 1a2b….7 has 1 eligible; domain 9f3e….2 has 1 eligible: 2 trays have fewer than 4 free;/,
    },
    {
      name: "within a domain, non-degraded trays first, then tray order, rank 0 the first",
      nodes: nvl72(3).map((n, i) => (i === 0 ? { ...n, nvlink: { ...n.nvlink, degraded: true } } : n)),
      replicas: 1,
      placed: [["gb-t01", "gb-t02"]],
    },
  ];

  it.each(cases)("$name", (c) => {
    const m = c.nodes.some((n) => n.devices[0]?.class === "h100-80g")
      ? model("big", [profile("nvl", "h100-80g", 8, 2)])
      : big;
    const p = plan(input({ nodes: c.nodes, models: [m], deployments: [deployment("big", "big", c.replicas)] }));
    expect(nodesOf(p)).toEqual(c.placed);
    for (const r of p.assign) {
      expect(r.shards.map((s) => s.rank)).toEqual(r.shards.map((_, i) => i));
      expect(new Set(r.shards.map((s) => s.leaderPort)).size).toBe(1);
      if (c.fabric) for (const s of r.shards) expect(s.fabric).toBe(c.fabric);
    }
    if (c.reason) expect(p.pending[0]?.reason).toMatch(c.reason);
    const unplaced = c.replicas - c.placed.length;
    expect(p.pending).toEqual(unplaced ? [{ deployment: "big", count: unplaced, reason: expect.any(String) }] : []);
  });

  it("gives NVLink shards MNNVL env, no HCAs, and all shards rank 0's address and leader port", () => {
    const p = plan(input({ nodes: nvl72(2), models: [big], deployments: [deployment("big", "big", 1)] }));
    const [s0, s1] = p.assign[0]!.shards;
    expect(s0).toMatchObject({
      shardId: "r1-s0",
      rank: 0,
      nnodes: 2,
      httpPort: 8000,
      leaderPort: 8001,
      hcas: [],
      visibleDevices: "0,1,2,3",
    });
    expect(s1).toMatchObject({
      shardId: "r1-s1",
      rank: 1,
      nnodes: 2,
      httpPort: 8000,
      leaderPort: 8001,
      leaderAddr: s0!.leaderAddr,
    });
    expect(s1!.env).toEqual({ NCCL_MNNVL_ENABLE: "1", NCCL_CUMEM_ENABLE: "1" });
  });

  it("gives InfiniBand shards the fabric's active HCAs nearest their cards", () => {
    const nodes = nvl72(2, { ib: true }).map((n) => out(n, ["IMEX down"]));
    nodes[1] = { ...nodes[1]!, ibFabrics: [fabric("ib-gb", ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"], ["mlx5_1"])] };
    const p = plan(input({ nodes, models: [big], deployments: [deployment("big", "big", 1)] }));
    const [s0, s1] = p.assign[0]!.shards;
    expect(s0!.hcas).toEqual(["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]);
    // a leading "=": NCCL takes each name exactly, not as a prefix
    expect(s0!.env).toEqual({ NCCL_MNNVL_ENABLE: "0", NCCL_IB_HCA: "=mlx5_0,mlx5_1,mlx5_2,mlx5_3" });
    expect(s1!.hcas).toEqual(["mlx5_0", "mlx5_2", "mlx5_3"]);
    expect(s1!.fabric).toBe("ib:ib-gb");
  });

  it("names exactly the chosen HCAs on a node with 12 of them (mlx5_1 must not also select mlx5_10 and mlx5_11)", () => {
    const twelve = Array.from({ length: 12 }, (_, i) => `mlx5_${i}`);
    const nodes = [hgx("h-a"), hgx("h-b")].map((n) => ({ ...n, ibFabrics: [fabric("ib-big", twelve)] }));
    const m = model("pair", [profile("ib", "h100-80g", 2, 2)]);
    const p = plan(input({ nodes, models: [m], deployments: [deployment("pair", "pair", 1)] }));
    expect(p.assign[0]!.shards.map((s) => [s.hcas, s.env.NCCL_IB_HCA])).toEqual([
      [["mlx5_0", "mlx5_1"], "=mlx5_0,mlx5_1"],
      [["mlx5_0", "mlx5_1"], "=mlx5_0,mlx5_1"],
    ]);
  });

  it("falls back to all of the fabric's active HCAs when the cards list none of them", () => {
    const nodes = [hgx("h-a"), hgx("h-b")].map((n) => ({
      ...n,
      ibFabrics: [fabric("ib-west", ["ib9", "ib8", "ib7"], ["ib8"])],
    }));
    const m = model("big", [profile("ib", "h100-80g", 8, 2)]);
    const p = plan(input({ nodes, models: [m], deployments: [deployment("big", "big", 1)] }));
    expect(p.assign[0]!.shards.map((s) => s.hcas)).toEqual([
      ["ib7", "ib9"],
      ["ib7", "ib9"],
    ]);
  });

  it("takes InfiniBand fabrics in name order and needs an active HCA on the node", () => {
    const nodes = [hgx("h-a"), hgx("h-b"), hgx("h-c")].map((n, i) => ({
      ...n,
      ibFabrics: [fabric("b-fabric", ["mlx5_0"]), fabric("a-fabric", ["mlx5_1"], i === 2 ? [] : ["mlx5_1"])],
    }));
    const m = model("big", [profile("ib", "h100-80g", 8, 2)]);
    const p = plan(input({ nodes, models: [m], deployments: [deployment("big", "big", 1)] }));
    expect(p.assign[0]!.shards[0]!.fabric).toBe("ib:b-fabric");
  });
});
