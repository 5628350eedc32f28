// What placement reads under the write lock on a libSQL server, as a second instance runs it: an instance whose cache
// has not seen the replicas another instance placed, or nodes' new facts, reads them before its transaction — every
// instance's writes wait while one holds the lock. (Its first read of the fleet it makes at start-up:
// test/api/serve-start.test.ts.)
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store, Tx } from "../../api/db/client.js";
import { cluster } from "../../api/db/schema.js";
import { placeIfNeeded } from "../../api/placement/apply.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { createTestApp, declareOneGpuDeployment, registerNodes, type TestApp } from "../helpers/app.js";
import { nodeInventory } from "../helpers/inventory.js";
import { watchReads } from "../helpers/watch-reads.js";

let t: TestApp;
const SETTINGS = { nodeLostAfterS: 180, repairGraceS: 60, repairMaxFraction: 0.25 };

/**
 * `store`, said to be a libSQL server, whose write transactions note each table their selects read from (and each
 * column list they name).
 */
function watched(store: Store) {
  const read: { table: string; columns: string[] }[] = [];
  const watch = (tx: Tx) => watchReads(tx, (table, columns) => read.push({ table, columns }));
  // as on a libSQL server, where the write lock is every instance's
  const write = <T>(fn: (tx: Tx) => Promise<T>) => store.write((tx) => fn(watch(tx)));
  return { read, store: { ...store, server: true, write } };
}

const tokens = new Map<string, string>();

beforeAll(async () => {
  t = await createTestApp({ settings: SETTINGS });
  for (const [id, token] of await registerNodes(t, ["n1", "n2", "n3"])) tokens.set(id, token);
  await declareOneGpuDeployment(t, 2);
});
afterAll(() => t.close());

describe("placement on an instance whose cache is behind another's placement", () => {
  it("reads the replicas another instance placed since its last run before its transaction", async () => {
    const mine = newPlacementCache();
    await t.db.update(cluster).set({ generation: sql`${cluster.generation} + 1` });
    expect((await placeIfNeeded(t.store, t.clock.now(), SETTINGS, mine)).ran).toBe(true);
    // the other instance (the app) places a third replica; then something moves the generation again
    await t.admin("PUT", "/api/v1/deployments/d", { body: { spec: { model: "m", replicas: 3, pool: "p" } } });
    await t.settle();
    await t.db.update(cluster).set({ generation: sql`${cluster.generation} + 1` });
    const w = watched(t.store);
    expect((await placeIfNeeded(w.store, t.clock.now(), SETTINGS, mine)).ran).toBe(true);
    // it did read the cluster in its transaction (the run happened there) …
    expect(w.read.some((x) => x.table === "cluster")).toBe(true);
    // … but not the placed replicas and shards (nor an inventory: no node changed)
    expect(w.read.filter((x) => ["replicas", "shards"].includes(x.table) && !x.columns.length)).toEqual([]);
    expect(w.read.filter((x) => x.columns.includes("inventory"))).toEqual([]);
  });

  it("reads the nodes whose facts changed since its last run before its transaction", async () => {
    const mine = newPlacementCache();
    await t.db.update(cluster).set({ generation: sql`${cluster.generation} + 1` });
    await placeIfNeeded(t.store, t.clock.now(), SETTINGS, mine);
    // every node's heartbeat says a card has a problem (as a fleet reconnecting after a restart rewrites its facts)
    for (const id of ["n1", "n2", "n3"]) {
      const gpu = nodeInventory(id).gpus[0]!;
      const problems = ["in use by another process: python (pid 1)"];
      const hb = await t.call("POST", `/api/v1/agents/${id}/heartbeat`, {
        token: tokens.get(id),
        body: { gpus: [{ uuid: gpu.uuid, health: { ...gpu.health, problems } }] },
      });
      expect(hb.status).toBe(200);
    }
    await t.settle();
    await t.db.update(cluster).set({ generation: sql`${cluster.generation} + 1` });
    const w = watched(t.store);
    expect((await placeIfNeeded(w.store, t.clock.now(), SETTINGS, mine)).ran).toBe(true);
    expect(w.read.some((x) => x.table === "cluster")).toBe(true);
    expect(w.read.filter((x) => x.columns.includes("inventory"))).toEqual([]);
  });
});
