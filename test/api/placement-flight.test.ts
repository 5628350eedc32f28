// Placement runs one at a time per instance: a burst of callers shares the run going on and the one queued after it,
// and the queued run sees what changed meanwhile.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bumpGeneration } from "../../api/db/cluster.js";
import { cluster } from "../../api/db/schema.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { placeTimed } from "../../api/placement/trigger.js";
import { createTestApp, defaultSettings, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await t.call("POST", "/api/v1/agents/register", {
    token: t.adminToken,
    body: { ...registerBody("n1", nodeInventory("n1")), labels: { pool: "p" } },
  });
  await t.settle();
});
afterAll(() => t.close());

describe("placeTimed", () => {
  it("lets callers during a run share one run queued after it, which places what changed meanwhile", async () => {
    const runs: number[] = [];
    const deps = {
      store: t.store,
      settings: defaultSettings(),
      placementCache: newPlacementCache(),
      observePlacement: (s: number) => void runs.push(s),
    };
    await t.store.write((tx) => bumpGeneration(tx));
    const first = placeTimed(deps, t.clock.now());
    const during = Array.from({ length: 10 }, () => placeTimed(deps, t.clock.now()));
    for (const p of during) expect(p).toBe(during[0]);
    // a change while the first run goes on: the queued run places it
    await t.store.write((tx) => bumpGeneration(tx));
    await Promise.all([first, ...during]);
    expect(runs.length).toBeLessThanOrEqual(2);
    const [c] = await t.db.select().from(cluster).where(eq(cluster.id, 1));
    expect(c!.placedGeneration).toBe(c!.generation);
  });
});
