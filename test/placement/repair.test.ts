import { describe, expect, it } from "vitest";
import { chooseRepairs, type RepairFacts } from "../../api/placement/repair.js";

const MIN = 60_000;
const facts = (over: Partial<RepairFacts>): RepairFacts => ({
  replicas: [],
  silentMs: new Map(),
  nodeCount: 10,
  lostAfterS: 180,
  graceS: 300,
  recentRepairs: 0,
  maxFraction: 0.2,
  ...over,
});
const replica = (id: string, ...shards: [string, string?][]) => ({
  id,
  shards: shards.map(([nodeId, state]) => ({ nodeId, state })),
});

describe("chooseRepairs", () => {
  it("frees a replica whose shard failed past its restart limit", () => {
    const r = chooseRepairs(
      facts({ replicas: [replica("r1", ["a", "ready"], ["b", "failed"]), replica("r2", ["c", "ready"])] }),
    );
    expect(r).toEqual({
      release: [{ id: "r1", why: "a shard failed past its restart limit", failedOn: ["b"] }],
      deferred: 0,
    });
  });

  it("frees a lost node's replicas only after the grace period", () => {
    const replicas = [replica("r1", ["a", "ready"]), replica("r2", ["b", "ready"])];
    expect(chooseRepairs(facts({ replicas, silentMs: new Map([["a", 7 * MIN]]) })).release).toEqual([]);
    const late = chooseRepairs(facts({ replicas, silentMs: new Map([["a", 8.1 * MIN]]) }));
    expect(late.release).toEqual([{ id: "r1", why: "node a lost for more than 300 s past 180 s of silence" }]);
  });

  it("evicts nothing while more than half the fleet is lost at once, and says why", () => {
    const replicas = ["a", "b", "c", "d"].map((n, i) => replica(`r${i}`, [n, "ready"]));
    const silentMs = new Map(["a", "b", "c"].map((n) => [n, 60 * MIN]));
    const r = chooseRepairs(facts({ replicas, silentMs, nodeCount: 4, maxFraction: 1 }));
    expect(r.release).toEqual([]);
    expect(r.held).toBe(
      "3 of 4 nodes are lost at once: not re-placing their 3 replica(s) (a control-plane or network outage must not evict the fleet)",
    );
  });

  it("still frees failed shards while repairs on lost nodes are held", () => {
    const r = chooseRepairs(
      facts({
        replicas: [replica("r1", ["a", "failed"]), replica("r2", ["b"])],
        silentMs: new Map([["b", 60 * MIN]]),
        nodeCount: 1,
      }),
    );
    expect(r.release.map((x) => x.id)).toEqual(["r1"]);
    expect(r.held).toBeDefined();
  });

  it("re-places at most the share allowed per minute, the rest deferred", () => {
    const replicas = Array.from({ length: 10 }, (_, i) => replica(`r${i}`, [`n${i}`, "failed"]));
    expect(chooseRepairs(facts({ replicas })).release.map((x) => x.id)).toEqual(["r0", "r1"]);
    expect(chooseRepairs(facts({ replicas })).deferred).toBe(8);
    expect(chooseRepairs(facts({ replicas, recentRepairs: 1 })).release.map((x) => x.id)).toEqual(["r0"]);
    expect(chooseRepairs(facts({ replicas, recentRepairs: 5 })).release).toEqual([]);
    expect(chooseRepairs(facts({ replicas: replicas.slice(0, 2) })).release).toHaveLength(1);
    // given only the replicas that may need repair, the share is of every placed one
    expect(chooseRepairs(facts({ replicas: replicas.slice(0, 2), replicaCount: 10 })).release).toHaveLength(2);
  });
});
