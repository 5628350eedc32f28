// On a libSQL server several instances place: each paces its runs by the cluster's last run, whichever instance made
// it (as long idle after it as it took, beyond an operator write's allowance), so that together they hold the server's
// write lock no more than one instance would. A file database (one instance) has no such wait.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../api/db/client.js";
import { bumpGeneration } from "../../api/db/cluster.js";
import { cluster } from "../../api/db/schema.js";
import { placeIfNeeded } from "../../api/placement/apply.js";
import { waitForCluster } from "../../api/placement/pace.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { movedAny, placeTimed, WRITE_ALLOWANCE_MS } from "../../api/placement/trigger.js";
import { createTestApp, defaultSettings, registerNodes, type TestApp } from "../helpers/app.js";

let t: TestApp;
/** The same database as an instance on a libSQL server sees it (the pace applies there only). */
let onServer: Store;
beforeAll(async () => {
  t = await createTestApp();
  await registerNodes(t, ["n1"]);
  await t.settle();
  onServer = { ...t.store, server: true };
});
afterAll(() => t.close());

const clusterRow = async () => (await t.db.select().from(cluster).where(eq(cluster.id, 1)))[0]!;
/** Another instance's run, as the cluster row tells it: began at `placedAt`, took `placeMs`. */
const otherRan = (placedAt: number, placeMs: number) => t.db.update(cluster).set({ placedAt, placeMs });

describe("waitForCluster", () => {
  it("waits after the cluster's last run as long as it took, less the allowance, and never past twice the run", () => {
    const last = { placedAt: 10_000, placeMs: 200 };
    expect(waitForCluster(last, 10_100)).toBe(300); // during the run: its rest, then as long idle
    expect(waitForCluster(last, 10_200)).toBe(200);
    expect(waitForCluster(last, 10_350)).toBe(50);
    expect(waitForCluster(last, 10_400)).toBe(0);
    expect(waitForCluster(last, 10_200, WRITE_ALLOWANCE_MS)).toBe(0);
    expect(waitForCluster(last, 10_200, 150)).toBe(50);
    // a run stamped by an instance whose clock is an hour ahead holds nobody up for an hour
    expect(waitForCluster({ placedAt: 10_000 + 3_600_000, placeMs: 200 }, 10_000)).toBe(400);
    expect(waitForCluster({ placedAt: 0, placeMs: 0 }, 10_000)).toBe(0);
  });
});

describe("placement on a libSQL server", () => {
  it("stamps each run that writes with its start and length", async () => {
    await t.store.write((tx) => bumpGeneration(tx));
    const now = t.clock.now();
    const placed = await placeIfNeeded(t.store, now, defaultSettings(), newPlacementCache());
    expect(placed.ran).toBe(true);
    const c = await clusterRow();
    expect(c.placedAt).toBe(now);
    expect(c.placeMs).toBeGreaterThanOrEqual(1);
  });

  it("waits for another instance's recent run, and runs once the cluster has been idle as long", async () => {
    await t.store.write((tx) => bumpGeneration(tx));
    const now = t.clock.now();
    await otherRan(now - 100, 200);
    const early = await placeIfNeeded(onServer, now, defaultSettings(), newPlacementCache(), { pace: 0 });
    expect(early).toMatchObject({ ran: false, waitMs: 300, changedNodes: [] });
    let c = await clusterRow();
    expect(c.placedGeneration).toBeLessThan(c.generation); // nothing written
    // an operator's write has the allowance: it runs at once
    const write = await placeIfNeeded(onServer, now, defaultSettings(), newPlacementCache(), {
      pace: WRITE_ALLOWANCE_MS,
    });
    expect(write.ran).toBe(true);
    c = await clusterRow();
    expect(c.placedGeneration).toBe(c.generation);
    expect(c.placedAt).toBe(now);
  });

  it("has no wait on a file database, and none where no pace is asked for", async () => {
    for (const [store, how] of [
      [t.store, { pace: 0 }],
      [onServer, {}],
    ] as const) {
      await t.store.write((tx) => bumpGeneration(tx));
      await otherRan(t.clock.now(), 60_000);
      const placed = await placeIfNeeded(store, t.clock.now(), defaultSettings(), newPlacementCache(), how);
      expect(placed.ran).toBe(true);
      expect(placed.waitMs).toBeUndefined();
    }
  });

  it("placeTimed waits once for the cluster's pace, then places, and its callers get that run", async () => {
    await t.store.write((tx) => bumpGeneration(tx));
    const now = t.clock.now();
    await otherRan(now, 20);
    const asked: (number | undefined)[] = [];
    const cache = newPlacementCache();
    const deps = {
      store: onServer,
      settings: defaultSettings(),
      place: (at: number, pace?: number) => {
        asked.push(pace);
        return placeIfNeeded(onServer, at, defaultSettings(), cache, pace === undefined ? {} : { pace });
      },
    };
    const placed = await placeTimed(deps, now);
    // asked with the agents' pace (no allowance), told to wait 40 ms, then asked again without a pace
    expect(asked).toEqual([0, undefined]);
    expect(placed.ran).toBe(true);
    const c = await clusterRow();
    expect(c.placedGeneration).toBe(c.generation);
    expect(c.placedAt).toBe(now + 40);
  });

  it("says a change placed by another instance during its wait was placed elsewhere (its poll hub looks at once)", async () => {
    await t.store.write((tx) => bumpGeneration(tx));
    const now = t.clock.now();
    await otherRan(now, 20);
    const cache = newPlacementCache();
    const deps = {
      store: onServer,
      settings: defaultSettings(),
      place: async (at: number, pace?: number) => {
        // during the wait, another instance places the change
        if (pace === undefined) await placeIfNeeded(t.store, at, defaultSettings(), newPlacementCache());
        return placeIfNeeded(onServer, at, defaultSettings(), cache, pace === undefined ? {} : { pace });
      },
    };
    const placed = await placeTimed(deps, now);
    expect(placed).toMatchObject({ ran: false, elsewhere: true });
    expect(movedAny(placed)).toBe(true);
  });
});
