// Placement's first read of a fleet goes in parts with turns of the event loop between them: on the synchronous
// local driver one statement over thousands of nodes would hold up every other request for all of it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertNode } from "../../api/db/nodes.js";
import { newPlacementCache, readPlacementRows } from "../../api/placement/rows.js";
import { RegisterRequest } from "../../shared/schemas/agent.js";
import { migratedDb } from "../helpers/app.js";
import { H100_XML, inventoryFromCapture, registerBody } from "../helpers/inventory.js";

const NODES = 900;
let db: Awaited<ReturnType<typeof migratedDb>>;

beforeAll(async () => {
  db = await migratedDb();
  const base = inventoryFromCapture(H100_XML);
  await db.store.write(async (tx) => {
    for (let i = 0; i < NODES; i++) {
      const id = `n${String(i).padStart(4, "0")}`;
      const inv = { ...base, gpus: base.gpus.map((g) => ({ ...g, uuid: `${id}-${g.uuid}` })) };
      await upsertNode(tx, RegisterRequest.parse({ ...registerBody(id, inv), labels: { pool: "p" } }), `h${i}`, 0);
    }
  });
});
afterAll(() => db.close());

describe("placement's read of a fleet", () => {
  it("reads every node, letting other work run while it does", async () => {
    let turns = 0;
    const other = setInterval(() => turns++, 0);
    try {
      const rows = await readPlacementRows(db.db, newPlacementCache(), 0);
      expect(rows.nodes).toHaveLength(NODES);
      expect(new Set(rows.nodes.map((n) => n.id)).size).toBe(NODES);
      expect(rows.nodes.every((n) => n.facts.devices.length === 8)).toBe(true);
    } finally {
      clearInterval(other);
    }
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
