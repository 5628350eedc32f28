// Properties of plan() over random clusters and declarations, with existing replicas made by a first plan.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { profileFingerprint } from "../../api/placement/fingerprint.js";
import { plan } from "../../api/placement/plan.js";
import type {
  PlaceDeployment,
  PlaceDevice,
  PlaceModel,
  PlaceNode,
  Plan,
  PlanInput,
} from "../../api/placement/types.js";
import { cards, fabric, input, model, node, profile } from "./builders.js";

const MIG_A = "a100-80g-mig-3g.40gb";
const MIG_B = "a100-80g-mig-1g.10gb";
const CLASSES = ["h100-80g", "gb200-185g", MIG_A, MIG_B];
const DOMAINS = ["d1-0000-0000-0000-000000000001.1", "d2-0000-0000-0000-000000000002.1"];

/** GB200 trays are mostly in domain 1, sometimes 2, rarely none; other nodes mostly in none. */
const domainOf = (kind: string, v: number): { domain?: string } => {
  const d = kind === "gb200-185g" ? (v < 7 ? 0 : v < 9 ? 1 : -1) : v < 7 ? -1 : v % 2;
  return d < 0 ? {} : { domain: DOMAINS[d]! };
};

const arbNode = (i: number): fc.Arbitrary<PlaceNode> =>
  fc
    .record({
      kind: fc.constantFrom("h100-80g", "gb200-185g", "gb200-185g", "mig"),
      count: fc.integer({ min: 1, max: 8 }),
      perNuma: fc.integer({ min: 1, max: 4 }),
      peers: fc.boolean(),
      migPer: fc.array(fc.constantFrom(MIG_A, MIG_B), { minLength: 1, maxLength: 3 }),
      sick: fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 2 }),
      pool: fc.integer({ min: 0, max: 5 }).map((v) => (v === 5 ? "dev" : "prod")),
      rack: fc.constantFrom("a", "b"),
      down: fc.integer({ min: 0, max: 9 }),
      engines: fc
        .integer({ min: 0, max: 5 })
        .map((v) => [["vllm", "sglang"], ["vllm"], ["sglang"], []][Math.max(0, v - 2)]!),
      domain: fc.integer({ min: 0, max: 9 }),
      eligible: fc.integer({ min: 0, max: 3 }),
      degraded: fc.integer({ min: 0, max: 4 }),
      tray: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
      fabrics: fc.constantFrom(["ib-a"], ["ib-a", "ib-b"], ["ib-b"], []),
      hcaDown: fc.boolean(),
      ports: fc.integer({ min: 0, max: 8 }),
      weights: fc.boolean(),
    })
    .map((r) => {
      const id = `n${i}`;
      const cs = cards(r.kind === "mig" ? Math.min(r.count, 2) : r.count, {
        peers: r.peers,
        perNuma: r.perNuma,
        ...(r.kind === "mig" ? { cls: "a100-80g" } : {}),
      });
      const devices: PlaceDevice[] =
        r.kind === "mig"
          ? cs.flatMap((c) =>
              r.migPer.map((cls, m) => ({
                id: 1000 + 100 * c.index + m,
                label: `${c.index}/mig${m}`,
                class: cls,
                card: c.index,
                migIndex: m,
                uuid: `${m % 2 ? "" : "MIG-"}${id}-${c.index}-${m}`,
                problems: [],
              })),
            )
          : cs.map((c) => ({
              id: c.index,
              label: String(c.index),
              class: r.kind,
              card: c.index,
              uuid: `GPU-${id}-${c.index}`,
              problems: [],
            }));
      for (const s of r.sick) if (devices[s]) devices[s] = { ...devices[s]!, problems: ["uncorrectable ECC"] };
      return node(id, {
        pool: r.pool,
        labels: { rack: r.rack },
        schedulable: r.down !== 0,
        ...(r.down === 0 ? { notSchedulable: "cordoned" } : {}),
        engines: [...r.engines],
        devices,
        cards: cs,
        nvlink: {
          ...domainOf(r.kind, r.domain),
          eligible: r.eligible > 0,
          reasons: r.eligible > 0 ? [] : ["IMEX down"],
          degraded: r.degraded === 0,
          ...(r.tray === undefined ? {} : { trayIndex: r.tray }),
        },
        ibFabrics: [...r.fabrics].map((f) => fabric(f, ["mlx5_0", "mlx5_1"], r.hcaDown ? ["mlx5_0"] : [])),
        weights: r.weights ? ["/models/m0"] : [],
        portRange: { first: 8000, last: 8000 + r.ports },
      });
    });

const arbProfile = (name: string) =>
  fc
    .record({
      cls: fc.constantFrom(...CLASSES, "gb200-185g"),
      k: fc.integer({ min: 1, max: 4 }),
      n: fc.constantFrom(1, 2, 2, 3),
      engine: fc.constantFrom("vllm", "vllm", "sglang", "command"),
    })
    .map((r) =>
      r.cls.includes("-mig-")
        ? profile(name, r.cls, 1, r.n === 3 ? 2 : 1, { engine: r.engine })
        : profile(name, r.cls, r.k, r.n, { engine: r.engine }),
    );

const arbModels: fc.Arbitrary<PlaceModel[]> = fc
  .tuple(fc.array(arbProfile("a"), { minLength: 1, maxLength: 1 }), arbProfile("b"), arbProfile("c"), arbProfile("d"))
  .map(([[a], b, c, d]) => [model("m0", [a!, b]), model("m1", [c]), model("m2", [d, b])]);

const arbDeployment = (i: number) =>
  fc
    .record({
      model: fc.integer({ min: 0, max: 9 }).map((v) => (v === 9 ? "gone" : `m${v % 3}`)),
      replicas: fc.integer({ min: 0, max: 4 }),
      pool: fc.integer({ min: 0, max: 9 }).map((v) => (v === 9 ? "dev" : "prod")),
      selector: fc.integer({ min: 0, max: 3 }).map((v) => v === 0),
      profiles: fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.subarray(["b", "a", "c", "d", "zz"], { minLength: 1 }) },
      ),
    })
    .map(
      ({ selector, profiles, ...d }): PlaceDeployment => ({
        name: `d${i}`,
        ...d,
        ...(selector ? { nodeSelector: { rack: "a" } } : {}),
        ...(profiles ? { profiles } : {}),
      }),
    );

const arbScenario = fc
  .record({
    nodes: fc.integer({ min: 2, max: 8 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbNode(i)))),
    models: arbModels,
    deployments: fc
      .integer({ min: 1, max: 4 })
      .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbDeployment(i)))),
    resize: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 4, maxLength: 4 }),
    drop: fc.boolean(),
  })
  .map(({ nodes, models, deployments, resize, drop }) => {
    const first = input({ nodes, models, deployments, nextSeq: 1 });
    const p = plan(first);
    const later = deployments
      .map((d, i) => ({ ...d, replicas: resize[i] ?? d.replicas }))
      .slice(0, drop ? -1 : undefined);
    return {
      first,
      firstPlan: p,
      second: { ...first, deployments: later, replicas: p.assign, nextSeq: 1 + p.assign.length },
    };
  });

/** Every invariant of a plan against its input. */
function check(x: PlanInput, p: Plan): void {
  const nodes = new Map(x.nodes.map((n) => [n.id, n]));
  const devices = new Map<string, Set<number>>();
  const ports = new Map<string, Set<number>>();
  const bind = (map: Map<string, Set<number>>, id: string, v: number) => {
    const s = map.get(id) ?? new Set();
    expect(s.has(v), `${v} twice on ${id}`).toBe(false);
    map.set(id, s.add(v));
  };
  for (const r of [...x.replicas, ...p.assign]) {
    for (const s of r.shards) {
      for (const d of s.deviceIds) bind(devices, s.nodeId, d);
      bind(ports, s.nodeId, s.httpPort);
      if (s.rank === 0) bind(ports, s.nodeId, s.leaderPort);
    }
  }
  p.assign.forEach((r, i) => {
    expect([r.id, r.seq]).toEqual([`r${x.nextSeq + i}`, x.nextSeq + i]);
    const d = x.deployments.find((e) => e.name === r.deployment)!;
    const m = x.models.find((e) => e.name === d.model)!;
    const prof = m.profiles.find((e) => e.name === r.profile)!;
    expect(d.profiles ?? m.profiles.map((e) => e.name)).toContain(prof.name);
    expect(r.fingerprint).toBe(profileFingerprint(m, prof));
    expect(r.shards.map((s) => s.rank)).toEqual(Array.from({ length: prof.nodes }, (_, j) => j));
    expect(new Set(r.shards.map((s) => s.nodeId)).size).toBe(prof.nodes);
    const leader = nodes.get(r.shards[0]!.nodeId)!;
    for (const s of r.shards) {
      const n = nodes.get(s.nodeId)!;
      expect(n.schedulable && n.pool === d.pool && (prof.engine === "command" || n.engines.includes(prof.engine))).toBe(
        true,
      );
      for (const [k, v] of Object.entries(d.nodeSelector ?? {})) expect(n.labels[k]).toBe(v);
      expect(s.deviceIds).toHaveLength(prof.gpusPerNode);
      for (const id of s.deviceIds)
        expect(n.devices.find((e) => e.id === id)).toMatchObject({ class: prof.gpuClass, problems: [] });
      expect([s.shardId, s.replicaId, s.nnodes, s.leaderAddr, s.leaderPort]).toEqual([
        `${r.id}-s${s.rank}`,
        r.id,
        prof.nodes,
        leader.mgmtAddr,
        r.shards[0]!.leaderPort,
      ]);
      expect(s.httpPort).toBeGreaterThanOrEqual(n.portRange.first);
      expect(s.httpPort).toBeLessThanOrEqual(n.portRange.last);
      if (s.fabric.startsWith("nvlink:")) expect(n.nvlink).toMatchObject({ domain: s.fabric.slice(7), eligible: true });
      if (s.fabric.startsWith("ib:")) {
        const active = n.ibFabrics
          .filter((f) => f.name === s.fabric.slice(3))
          .flatMap((f) => f.hcas.filter((h) => h.active).map((h) => h.name));
        expect(s.hcas.length).toBeGreaterThan(0);
        for (const h of s.hcas) expect(active).toContain(h);
      }
    }
    expect(r.shards[0]!.leaderPort).toBeLessThanOrEqual(leader.portRange.last);
    expect(r.shards[0]!.leaderPort).toBeGreaterThanOrEqual(leader.portRange.first);
    if (prof.gpuClass.includes("-mig-")) {
      expect([prof.tp, prof.pp, prof.gpusPerNode, prof.nodes]).toEqual([1, 1, 1, 1]);
      expect(r.shards[0]!.visibleDevices).toMatch(/^MIG-(?!MIG-)/);
    }
  });
  const released = new Set(p.release);
  expect(released.size).toBe(p.release.length);
  for (const id of released) expect(x.replicas.map((r) => r.id)).toContain(id);
  for (const d of x.deployments) {
    const kept = x.replicas.filter((r) => r.deployment === d.name && !released.has(r.id)).length;
    const added = p.assign.filter((r) => r.deployment === d.name).length;
    const waiting = p.pending.filter((e) => e.deployment === d.name);
    expect(waiting.length).toBeLessThanOrEqual(1);
    expect(kept + added + (waiting[0]?.count ?? 0)).toBe(d.replicas);
    if (waiting[0]) expect(waiting[0].reason.length).toBeGreaterThan(0);
  }
}

/** The same input with every list in another order. */
function shuffled(x: PlanInput): PlanInput {
  const y = structuredClone(x);
  y.nodes.reverse();
  for (const n of y.nodes) {
    n.devices.reverse();
    n.cards.reverse();
    n.ibFabrics.reverse();
  }
  y.deployments.reverse();
  y.replicas.reverse();
  return y;
}

describe("plan properties", () => {
  it("holds every invariant, with and without existing replicas, is deterministic, and the same with fits kept across plans", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(arbScenario, ({ first, firstPlan, second }) => {
        check(first, firstPlan);
        const p = plan(second);
        check(second, p);
        expect(plan(shuffled(second))).toEqual(p);
        expect(plan(shuffled(first))).toEqual(firstPlan);
        // node fits kept from one plan to the next (placement's cache) change nothing: the second plan's nodes hold
        // the first's shards, the same objects, and every fit reused must still be true of them
        const fits = new Map();
        expect(plan(first, fits)).toEqual(firstPlan);
        expect(plan(second, fits)).toEqual(p);
        expect(plan(second, fits)).toEqual(p);
        for (const r of [...firstPlan.assign, ...p.assign]) seen.add(r.shards[0]!.fabric.replace(/:.*/, ""));
        for (const r of [...firstPlan.assign, ...p.assign])
          if (r.shards[0]!.visibleDevices.startsWith("MIG-")) seen.add("mig");
        if (p.release.length) seen.add("release");
        if (p.pending.length) seen.add("pending");
      }),
      { numRuns: 400 },
    );
    // The generators reach every kind of outcome, so the invariants above were checked on each.
    expect([...seen].sort()).toEqual(["ib", "mig", "nvlink", "pending", "release", "single"]);
  });
});
