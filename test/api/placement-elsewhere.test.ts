// Two instances on one database, a change both set out to place: the one whose transaction waited for the write lock
// finds it placed by the other, and its poll hub looks at once — the polls parked on it for the nodes the other
// instance moved answer then, not at the hub's next look.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assignIndexOf } from "../../api/db/assign-index.js";
import type { Store } from "../../api/db/client.js";
import { cluster, deployments } from "../../api/db/schema.js";
import { placeIfNeeded } from "../../api/placement/apply.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { placeAndWake } from "../../api/placement/trigger.js";
import { createPollHub } from "../../api/poll-hub.js";
import { createTestApp, declareOneGpuDeployment, silentLog, type TestApp } from "../helpers/app.js";
import { H100_XML, inventoryFromCapture, registerBody } from "../helpers/inventory.js";

let t: TestApp;
const SETTINGS = { nodeLostAfterS: 180, repairGraceS: 60, repairMaxFraction: 0.25 };

beforeAll(async () => {
  t = await createTestApp({ settings: SETTINGS });
  await t.call("POST", "/api/v1/agents/register", {
    token: t.adminToken,
    body: { ...registerBody("n1", inventoryFromCapture(H100_XML)), labels: { pool: "p" } },
  });
  await declareOneGpuDeployment(t, 0);
});
afterAll(() => t.close());

describe("an instance that finds a change placed by another", () => {
  it("has its poll hub look at once, and the polls parked on it answer with the other instance's placement", async () => {
    // the deployment now asks for a replica (an operator's write through the other instance)
    await t.db
      .update(deployments)
      .set({ spec: sql`json_set(${deployments.spec}, '$.replicas', 1)` })
      .where(eq(deployments.name, "d"));
    await t.db.update(cluster).set({ generation: sql`${cluster.generation} + 1` });
    const index = (await assignIndexOf(t.db, "n1"))!;
    // this instance: a hub that would look again only after an hour, with n1's poll parked on it
    const stop = new AbortController();
    const hub = createPollHub(t.store, 3_600_000, () => {}, stop.signal);
    const parked = hub.wait("n1", index, 3_600_000);
    // its placement's transaction waits for the lock while the other instance places the change and commits
    const other = newPlacementCache();
    let placedThere = 0;
    const waitsForTheLock: Store = {
      ...t.store,
      write: async (fn) => {
        placedThere += (await placeIfNeeded(t.store, t.clock.now(), SETTINGS, other)).assigned;
        return t.store.write(fn);
      },
    };
    const deps = { store: waitsForTheLock, settings: SETTINGS, waiter: hub, log: silentLog, now: t.clock.now };
    await placeAndWake(deps, "a test");
    expect(placedThere).toBe(1);
    const answer = await Promise.race([parked, new Promise((r) => setTimeout(() => r("still parked"), 5_000))]);
    expect(answer).toMatchObject({ index: index + 1, shards: [expect.objectContaining({ deployment: "d" })] });
    stop.abort();
  });
});
