// Adoption: an engine a node runs that the control plane has no row for becomes a replica again, or is refused with
// the reason (placement rule 7).
import { describe, expect, it } from "vitest";
import { adoptOrphans, type Orphan } from "../../api/placement/adopt.js";
import { plan } from "../../api/placement/plan.js";
import { startShard } from "../../api/placement/start-shard.js";
import type { PlanInput } from "../../api/placement/types.js";
import { deployment, hgx, input, model, nvl72, profile } from "./builders.js";

const l70 = model("l70", [profile("tp2", "h100-80g", 2)]);
const before = input({ nodes: [hgx("gpu-1")], models: [l70], deployments: [deployment("chat", "l70", 2)], nextSeq: 7 });
/** The two replicas a first plan placed (r7, r8), as their agents report their engines. */
const placed = plan(before).assign;
const reported: Orphan[] = placed.map((r) => ({
  nodeId: "gpu-1",
  state: "ready",
  spec: startShard(before, r, r.shards[0]!),
}));
/** The control plane restored from a backup taken before they were placed: nothing placed, ids from 1 again. */
const restored: PlanInput = { ...before, nextSeq: 1 };

describe("adoptOrphans", () => {
  it("takes back a reported engine with its ids, devices and ports, and moves new ids past it", () => {
    const a = adoptOrphans(restored, reported);
    expect(a.refused).toEqual([]);
    expect(a.adopted).toEqual(placed.map((r) => ({ ...r, ready: true })));
    expect(a.nextSeq).toBe(9);
    // what plan() then sees: the deployment whole, nothing new placed on the adopted devices
    const p = plan({ ...restored, replicas: a.adopted, nextSeq: a.nextSeq });
    expect(p).toEqual({ assign: [], release: [], pending: [] });
  });

  it("adopts only as many as the deployment is short of", () => {
    const a = adoptOrphans({ ...restored, deployments: [deployment("chat", "l70", 1)] }, reported);
    expect(a.adopted.map((r) => r.id)).toEqual(["r7"]);
    expect(a.refused).toEqual([{ nodeId: "gpu-1", shardId: "r8-s0", why: "deployment chat has all its replicas" }]);
  });

  it("refuses an engine whose profile changed, whose deployment is gone, or that is no longer live", () => {
    const changed = { ...restored, models: [model("l70", [profile("tp2", "h100-80g", 2, 1, { args: ["--x"] })])] };
    expect(adoptOrphans(changed, reported.slice(0, 1)).refused[0]!.why).toBe(
      "profile tp2 changed since the engine started",
    );
    expect(adoptOrphans({ ...restored, deployments: [] }, reported.slice(0, 1)).refused[0]!.why).toBe(
      "no deployment chat",
    );
    expect(adoptOrphans(restored, [{ ...reported[0]!, state: "failed" }]).refused[0]!.why).toBe("its engine is failed");
  });

  it("refuses devices another replica holds now, and a node outside the deployment's pool", () => {
    const other = plan({ ...restored, nextSeq: 20 }).assign; // placed first after the restore: gpus 0-1 and 2-3
    const a = adoptOrphans({ ...restored, replicas: other.slice(0, 1), nextSeq: 21 }, reported);
    expect(a.adopted.map((r) => r.id)).toEqual(["r8"]);
    expect(a.refused[0]).toMatchObject({ shardId: "r7-s0", why: "devices 0, 1 now held by another replica" });
    const elsewhere = adoptOrphans({ ...restored, nodes: [hgx("gpu-1", { pool: "batch" })] }, reported);
    expect(elsewhere.refused[0]!.why).toBe("node gpu-1 is not in deployment chat's pool and selector");
  });

  it("never adopts a shard of a multi-node replica", () => {
    const gang = input({
      nodes: nvl72(2),
      models: [model("big", [profile("nvl", "gb200-185g", 4, 2)])],
      deployments: [deployment("big", "big", 1)],
    });
    const [r] = plan(gang).assign;
    const a = adoptOrphans(
      gang,
      r!.shards.map((s) => ({ nodeId: s.nodeId, state: "ready", spec: startShard(gang, r!, s) })),
    );
    expect(a.adopted).toEqual([]);
    expect(a.refused.map((x) => x.why)).toEqual([
      expect.stringMatching(/^a multi-node shard is never adopted/),
      expect.stringMatching(/^a multi-node shard is never adopted/),
    ]);
  });

  it("refuses an id placement would not give, or one taken by a replica that exists", () => {
    const forged = { ...reported[0]!, spec: { ...reported[0]!.spec, shardId: "mine", replicaId: "mine" } };
    expect(adoptOrphans(restored, [forged]).refused[0]!.why).toBe('"mine" is not a shard id placement gives');
    const taken = plan({ ...restored, nextSeq: 7 }).assign.slice(0, 1); // an r7 on gpus 0-1 after the restore
    const other = { ...reported[0]!, spec: { ...reported[0]!.spec, deviceIds: [4, 5] } };
    expect(adoptOrphans({ ...restored, replicas: taken }, [other]).refused[0]!.why).toBe(
      "the id r7 is taken by another replica",
    );
  });
});
