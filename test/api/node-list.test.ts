// GET /api/v1/nodes at fleet size: the list reads each node's summary columns, never its inventory (kilobytes of JSON
// per node), in parts with a turn of the event loop between them — on the embedded file a read runs on the event loop,
// and a whole fleet read at once held every other request of the instance.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tx } from "../../api/db/client.js";
import { listNodeSummaries } from "../../api/views/nodes.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";
import { watchReads } from "../helpers/watch-reads.js";

let t: TestApp;
const ids = Array.from({ length: 12 }, (_, i) => `node-${String(i).padStart(2, "0")}`);
beforeAll(async () => {
  t = await createTestApp();
  for (const [i, id] of ids.entries())
    await t.call("POST", "/api/v1/agents/register", {
      token: t.adminToken,
      body: { ...registerBody(id, nodeInventory(id)), labels: { pool: i % 3 === 0 ? "a" : "b" } },
    });
});
afterAll(() => t.close());

describe("the node list", () => {
  it("reads the summary columns in parts, every node once and in order, no inventory", async () => {
    const reads: string[][] = [];
    const db = watchReads(t.db as unknown as Tx, (table, columns) => table === "nodes" && reads.push(columns));
    const rows = await listNodeSummaries(db, undefined, 5);
    expect(rows.map((r) => r.id)).toEqual(ids);
    expect(reads).toHaveLength(3);
    for (const columns of reads) {
      expect(columns).toContain("lastSeenAt");
      expect(columns).not.toContain("inventory");
      expect(columns).not.toContain("readings");
    }
  });

  it("lets a timer set as it starts run before it ends (a turn of the event loop between parts)", async () => {
    const order: string[] = [];
    setTimeout(() => order.push("timer"), 0);
    await listNodeSummaries(t.db, undefined, 5).then(() => order.push("list"));
    expect(order).toEqual(["timer", "list"]);
  });

  it("of one pool reads only that pool's nodes, across parts", async () => {
    const rows = await listNodeSummaries(t.db, "a", 2);
    expect(rows.map((r) => r.id)).toEqual(ids.filter((_, i) => i % 3 === 0));
    const r = await t.admin("GET", "/api/v1/nodes?pool=b");
    expect(r.json.items.map((n: { id: string }) => n.id)).toEqual(ids.filter((_, i) => i % 3 !== 0));
  });
});
