// Placement deciding before its write transaction (the fleet thread on the file): the instance's other writes wait
// only for placement's writes, not for its reads and plan; a transaction that finds the cluster changed since the
// decision decides again rather than writing a stale one.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store, Tx } from "../../api/db/client.js";
import { cluster, deployments, events, replicas } from "../../api/db/schema.js";
import { placeIfNeeded } from "../../api/placement/apply.js";
import { newPlacementCache, type PlacementCache } from "../../api/placement/rows.js";
import { createTestApp, declareOneGpuDeployment, registerNodes, type TestApp } from "../helpers/app.js";
import { watchReads } from "../helpers/watch-reads.js";

let t: TestApp;
const SETTINGS = { nodeLostAfterS: 180, repairGraceS: 60, repairMaxFraction: 0.25 };
const FIRST = { decideFirst: true };

beforeAll(async () => {
  t = await createTestApp({ settings: SETTINGS });
  await registerNodes(t, ["n1", "n2", "n3", "n4"]);
  await declareOneGpuDeployment(t, 1);
});
afterAll(() => t.close());

/** Sets deployment d's replicas straight in the database (no placement of the app's follows) and moves the generation. */
async function wantReplicas(n: number) {
  await t.db
    .update(deployments)
    .set({ spec: JSON.stringify({ model: "m", replicas: n, pool: "p" }) })
    .where(eq(deployments.name, "d"));
  await t.db.update(cluster).set({ generation: sql`${cluster.generation} + 1` });
}

const placedOfD = async () => (await t.db.select().from(replicas).where(eq(replicas.deployment, "d"))).length;

/** `store` whose write transactions note each table their selects read from; `before` runs ahead of the first one. */
function watched(store: Store, before?: () => Promise<unknown>) {
  const read: string[] = [];
  const watch = (tx: Tx) => watchReads(tx, (table) => read.push(table));
  let first = before;
  const write = async <T>(fn: (tx: Tx) => Promise<T>) => {
    const run = first;
    first = undefined;
    await run?.();
    return store.write((tx) => fn(watch(tx)));
  };
  return { read, store: { ...store, write } };
}

/** A cache that runs `onPlan` when plan() first looks at a node's fit. */
function planWatched(onPlan: () => void): PlacementCache {
  let told = false;
  class Told<K, V> extends Map<K, V> {
    override get(k: K) {
      if (!told) onPlan();
      told = true;
      return super.get(k);
    }
  }
  return { ...newPlacementCache(), fits: new Told() };
}

describe("placement that decides before its write transaction", () => {
  it("writes its decision in a transaction that reads only the cluster row", async () => {
    await wantReplicas(2);
    const w = watched(t.store);
    const r = await placeIfNeeded(w.store, t.clock.now(), SETTINGS, newPlacementCache(), FIRST);
    expect(r).toMatchObject({ ran: true, assigned: 1 });
    expect(w.read).toEqual(["cluster"]);
    expect(await placedOfD()).toBe(2);
  });

  it("lets a write asked for while it plans commit before its own", async () => {
    await wantReplicas(3);
    const order: string[] = [];
    const cache = planWatched(() => {
      void t.store
        .write((tx) => tx.insert(events).values({ at: t.clock.now(), type: "node_registered", message: "meanwhile" }))
        .then(() => order.push("the other write"));
    });
    await placeIfNeeded(t.store, t.clock.now(), SETTINGS, cache, FIRST);
    order.push("placement");
    await t.settle();
    expect(order).toEqual(["the other write", "placement"]);
    expect(await placedOfD()).toBe(3);
  });

  it("decides again in its transaction when the cluster changed after its decision", async () => {
    await wantReplicas(4);
    // decided: a fourth replica; then, before its transaction, the deployment is scaled down to 2
    const w = watched(t.store, () => wantReplicas(2));
    const r = await placeIfNeeded(w.store, t.clock.now(), SETTINGS, newPlacementCache(), FIRST);
    expect(r).toMatchObject({ ran: true, assigned: 0, released: 1 });
    expect(w.read).toContain("deployments");
    expect(await placedOfD()).toBe(2);
    const [c] = await t.db.select().from(cluster);
    expect(c!.placedGeneration).toBe(c!.generation);
  });
});
