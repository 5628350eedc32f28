// Existing replicas: kept, scaled down, released with their deployment or profile; and the plan's determinism.
import { describe, expect, it } from "vitest";
import { plan } from "../../api/placement/plan.js";
import type { PlanInput } from "../../api/placement/types.js";
import { a100Mig, deployment, hgx, input, l40s, MIG_CLASS, model, nvl72, profile } from "./builders.js";

const l70 = model("l70", [profile("tp4", "h100-80g", 4), profile("tp2", "h100-80g", 2)]);
/** Three tp2 replicas of l70 placed on an HGX node by a first plan, r1 to r3. */
function placed(): PlanInput {
  const first = input({
    nodes: [hgx("gpu-1")],
    models: [l70],
    deployments: [deployment("l70", "l70", 3, { profiles: ["tp2"] })],
  });
  return { ...first, replicas: plan(first).assign, nextSeq: 4 };
}

describe("existing replicas", () => {
  it("keeps valid replicas and places nothing more", () => {
    expect(plan(placed())).toEqual({ assign: [], release: [], pending: [] });
  });

  it("scale-down releases the newest", () => {
    const x = placed();
    x.deployments = [deployment("l70", "l70", 1, { profiles: ["tp2"] })];
    expect(plan(x).release).toEqual(["r2", "r3"]);
  });

  it("a deleted deployment releases all its replicas", () => {
    const x = placed();
    x.deployments = [];
    expect(plan(x)).toEqual({ assign: [], release: ["r1", "r2", "r3"], pending: [] });
  });

  it("a profile no longer allowed releases its replicas, and new ones wait for their devices", () => {
    const x = placed();
    x.deployments = [deployment("l70", "l70", 3, { profiles: ["tp4"] })];
    const p = plan(x);
    expect(p.release).toEqual(["r1", "r2", "r3"]);
    expect(p.assign).toEqual([]);
    expect(p.pending).toEqual([
      {
        deployment: "l70",
        count: 3,
        reason: "needs 4 free h100-80g on one node; best node gpu-1 has 2 free (6 of 8 held by replicas)",
      },
    ]);
  });

  it("a changed fingerprint replaces replicas one at a time, each new one ready before an old one goes", () => {
    const x = placed();
    x.models = [
      model("l70", [
        profile("tp4", "h100-80g", 4),
        profile("tp2", "h100-80g", 2, 1, { args: ["--max-model-len", "8192"] }),
      ]),
    ];
    const first = plan(x);
    expect(first.release).toEqual([]);
    expect(first.assign.map((r) => r.id)).toEqual(["r4"]);
    expect(first.assign[0]!.fingerprint).not.toBe(x.replicas[0]!.fingerprint);
    // r4 is not ready yet: nothing moves
    const waiting = { ...x, replicas: [...x.replicas, first.assign[0]!], nextSeq: 5 };
    expect(plan(waiting)).toMatchObject({ assign: [], release: [] });
    // r4 ready: the oldest old replica drains; no room for the next new one until it is gone, so plan again
    const ready = { ...waiting, replicas: waiting.replicas.map((r) => (r.id === "r4" ? { ...r, ready: true } : r)) };
    expect(plan(ready)).toMatchObject({ assign: [], release: ["r1"], again: true });
    const next = plan({ ...ready, replicas: ready.replicas.filter((r) => r.id !== "r1") });
    expect(next.assign.map((r) => r.id)).toEqual(["r5"]);
    expect(next.release).toEqual([]);
  });

  it("with no room for a new replica beside the old ones, replaces the oldest in place", () => {
    const x = placed();
    x.nodes = x.nodes.map((n) => ({ ...n, devices: n.devices.slice(0, 6) }));
    x.models = [model("l70", [profile("tp2", "h100-80g", 2, 1, { args: ["--new"] })])];
    expect(plan(x)).toMatchObject({ assign: [], release: ["r1"], again: true });
  });

  it("a draining node's replicas move elsewhere one at a time, each new one ready before the old one goes", () => {
    const x = { ...placed(), nodes: [hgx("gpu-1"), hgx("gpu-2")] };
    x.nodes[0] = { ...x.nodes[0]!, schedulable: false, notSchedulable: "draining" };
    const first = plan(x);
    expect(first.release).toEqual([]);
    expect(first.assign.map((r) => [r.id, r.shards[0]!.nodeId])).toEqual([["r4", "gpu-2"]]);
    const ready = { ...x, replicas: [...x.replicas, { ...first.assign[0]!, ready: true }], nextSeq: 5 };
    expect(plan(ready)).toMatchObject({ release: ["r1"] });
  });

  it("a draining node's replica with nowhere to go keeps serving", () => {
    const x = placed();
    x.nodes = [{ ...x.nodes[0]!, schedulable: false, notSchedulable: "draining" }];
    expect(plan(x)).toMatchObject({ assign: [], release: [] });
  });

  it("scales down not-ready replicas before ready ones, newest first", () => {
    const x = placed();
    x.replicas = x.replicas.map((r) => ({ ...r, ready: r.id !== "r1" }));
    x.deployments = [{ ...x.deployments[0]!, replicas: 1 }];
    expect(plan(x).release).toEqual(["r1", "r3"]);
  });

  it("a missing model leaves every replica pending and releases the old ones", () => {
    const x = placed();
    x.models = [];
    expect(plan(x)).toEqual({
      assign: [],
      release: ["r1", "r2", "r3"],
      pending: [{ deployment: "l70", count: 3, reason: "model l70 does not exist" }],
    });
  });

  it("an unknown allowed profile is skipped, and none known says so", () => {
    const x = input({
      nodes: [hgx("gpu-1")],
      models: [l70],
      deployments: [deployment("l70", "l70", 1, { profiles: ["tp16"] })],
    });
    expect(plan(x).pending[0]!.reason).toBe(
      "none of the allowed profiles (tp16) is a profile of model l70 (it has tp4, tp2)",
    );
    x.deployments = [deployment("l70", "l70", 1, { profiles: ["tp16", "tp4"] })];
    expect(plan(x).assign[0]!.profile).toBe("tp4");
  });
});

describe("determinism", () => {
  const mixed = (): PlanInput => {
    const x = input({
      nodes: [...nvl72(3, { ib: true }), hgx("gpu-1"), hgx("gpu-2"), a100Mig("mig-1"), l40s("l-1"), l40s("l-2")],
      models: [
        model("big", [profile("nvl", "gb200-185g", 4, 2)]),
        l70,
        model("small", [profile("mig", MIG_CLASS)]),
        model("l40", [profile("ib", "l40s-48g", 2, 2), profile("one", "l40s-48g", 1)]),
      ],
      deployments: [
        deployment("small", "small", 3),
        deployment("big", "big", 2),
        deployment("l70", "l70", 3),
        deployment("l40", "l40", 3),
      ],
    });
    return {
      ...x,
      replicas: plan(x).assign,
      nextSeq: 100,
      deployments: x.deployments.map((d) => ({ ...d, replicas: d.replicas + 1 })),
    };
  };

  it("gives the same plan for the same input, whatever the order of its lists", () => {
    const x = mixed();
    const y = structuredClone(x);
    y.nodes.reverse();
    for (const n of y.nodes) n.devices.reverse();
    y.models.reverse();
    y.deployments.reverse();
    y.replicas.reverse();
    const p = plan(x);
    expect(p.assign.length).toBeGreaterThan(0);
    expect(plan(structuredClone(x))).toEqual(p);
    expect(plan(y)).toEqual(p);
  });
});
