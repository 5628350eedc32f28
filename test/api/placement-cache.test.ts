// Placement's read cache, as a second instance holds it: it fetches only what changed since its last read (rows by
// their change index, replicas by the assignment sequence) and still sees every change another instance made.
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb } from "../../api/db/open.js";
import { nodes } from "../../api/db/schema.js";
import { newPlacementCache, readPlacementRows, silentQuery } from "../../api/placement/rows.js";
import { createTestApp, declareOneGpuDeployment, registerNodes, type TestApp } from "../helpers/app.js";
import { tempDir } from "../helpers/db.js";
import { H100_XML, inventoryFromCapture } from "../helpers/inventory.js";

let t: TestApp;
const tokens = new Map<string, string>();
const inv = (id: string) => {
  const x = inventoryFromCapture(H100_XML);
  return { ...x, gpus: x.gpus.map((g) => ({ ...g, uuid: `${id}-${g.uuid}` })) };
};
const other = newPlacementCache();
const LOST_AFTER_S = 180;
const read = () => readPlacementRows(t.store.db, other, t.clock.now() - LOST_AFTER_S * 1000);
const node = async (id: string) => (await read()).nodes.find((n) => n.id === id);
const rev = async (id: string) => (await t.db.select({ rev: nodes.rev }).from(nodes).where(eq(nodes.id, id)))[0]?.rev;
const heartbeat = (id: string, gpus: object[]) =>
  t.call("POST", `/api/v1/agents/${id}/heartbeat`, { token: tokens.get(id), body: { gpus } });

beforeAll(async () => {
  t = await createTestApp({ settings: { nodeLostAfterS: LOST_AFTER_S } });
  for (const [id, token] of await registerNodes(t, ["n1", "n2"], "p", inv)) tokens.set(id, token);
});
afterAll(() => t.close());

describe("placement's read cache", () => {
  it("sees an operator's cordon made since its last read", async () => {
    expect((await node("n1"))?.adminState).toBe("ready");
    expect((await t.admin("POST", "/api/v1/nodes/n1/cordon")).status).toBe(200);
    expect((await node("n1"))?.adminState).toBe("cordoned");
    await t.admin("POST", "/api/v1/nodes/n1/uncordon");
    expect((await node("n1"))?.adminState).toBe("ready");
  });

  it("re-reads a node whose heartbeat changed what placement derives, and no other", async () => {
    const gpus = inv("n2").gpus;
    const before = await node("n2");
    const revBefore = await rev("n2");
    // utilization alone: the row keeps its change index, and the cache keeps the facts it had
    expect(
      (
        await heartbeat(
          "n2",
          gpus.map((g) => ({ uuid: g.uuid, utilizationPercent: 50 })),
        )
      ).status,
    ).toBe(200);
    expect(await rev("n2")).toBe(revBefore);
    expect((await node("n2"))?.facts).toBe(before?.facts);
    // a problem on a card: placement must see it
    const problem = "in use by another process: python (pid 1)";
    await heartbeat("n2", [{ uuid: gpus[0]!.uuid, health: { ...gpus[0]!.health, problems: [problem] } }]);
    expect(await rev("n2")).toBeGreaterThan(revBefore!);
    expect((await node("n2"))?.facts.devices[0]?.problems).toEqual([problem]);
  });

  it("sees replicas another instance placed, the states their shards report, and silence", async () => {
    await declareOneGpuDeployment(t, 2);
    const placed = (await read()).placed;
    expect(placed).toHaveLength(2);
    const [shard] = placed[0]!.shards;
    await t.call("POST", `/api/v1/agents/${shard!.nodeId}/status`, {
      token: tokens.get(shard!.nodeId),
      body: { shards: [{ shardId: shard!.shardId, replicaId: shard!.replicaId, state: "ready" }] },
    });
    expect([...(await read()).stateOf.values()]).toContainEqual(
      expect.objectContaining({ shardId: shard!.shardId, state: "ready" }),
    );
    // n1 goes silent past the limit (n2 keeps polling): its real last-seen time comes back
    const seen = (await t.db.select({ at: nodes.lastSeenAt }).from(nodes).where(eq(nodes.id, "n1")))[0]!.at;
    t.clock.advance((LOST_AFTER_S + 10) * 1000);
    await t.call("GET", "/api/v1/agents/n2/assignments", { token: tokens.get("n2") });
    expect((await node("n1"))?.lastSeenAt).toBe(seen);
    expect((await node("n2"))?.lastSeenAt).toBeGreaterThanOrEqual(t.clock.now() - LOST_AFTER_S * 1000);
    await t.admin("PUT", "/api/v1/deployments/d", { body: { spec: { model: "m", replicas: 1, pool: "p" } } });
    await t.settle();
    expect((await read()).placed).toHaveLength(1);
  });

  it("forgets a deleted node and its states", async () => {
    expect((await t.admin("DELETE", "/api/v1/nodes/n1")).status).toBe(204);
    const rows = await read();
    expect(rows.nodes.map((n) => n.id)).toEqual(["n2"]);
    expect([...rows.stateOf.values()].filter((s) => s.nodeId === "n1")).toEqual([]);
  });

  it("reads everything again from a database restored from an older backup", async () => {
    // the backup: taken while n2 was cordoned; the live database then moves on (n2 back in service)
    expect((await t.admin("POST", "/api/v1/nodes/n2/cordon")).status).toBe(200);
    const backup = tempDir();
    try {
      await t.db.run(sql.raw(`VACUUM INTO '${join(backup.dir, "backup.db")}'`));
      await t.admin("POST", "/api/v1/nodes/n2/uncordon");
      expect((await node("n2"))?.adminState).toBe("ready");
      // the same instance's cache, now reading the restored copy: what the copy says, not what the cache kept
      const restored = await openDb(`file:${join(backup.dir, "backup.db")}`);
      try {
        const rows = await readPlacementRows(restored.db, other, t.clock.now() - LOST_AFTER_S * 1000);
        expect(rows.nodes.find((n) => n.id === "n2")?.adminState).toBe("cordoned");
      } finally {
        restored.client.close();
      }
    } finally {
      backup.cleanup();
    }
  });

  it("finds the silent nodes in an index alone (thousands while a fleet comes back), reading no row of the table", async () => {
    const q = silentQuery(t.db, t.clock.now()).toSQL();
    const plan = await t.db.all<{ detail: string }>(
      sql.raw(`explain query plan ${q.sql.replace("?", String(q.params[0]))}`),
    );
    expect(plan.map((r) => r.detail)).toEqual([
      expect.stringMatching(/^SEARCH nodes USING COVERING INDEX nodes_last_seen_id/),
    ]);
  });
});
