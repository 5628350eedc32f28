// Each node's long-poll index lives in `node_assign_index`, not in its `nodes` row: a placement that moves a thousand
// nodes' indexes then rewrites no row that holds an inventory (at 10,000 seeded nodes, 1,000 of those updates took
// ~40 ms of placement's write turn, the narrow table's ~4 ms). What a user relies on stays: an index moves when the
// node's shards change, a database from before keeps every node's index, and a node registered anew starts at 0.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { migrate } from "drizzle-orm/libsql/migrator";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDb } from "../../api/db/open.js";
import { nodeAssignIndex } from "../../api/db/schema.js";
import { createTestApp, declareOneGpuDeployment, registerNodes, type TestApp } from "../helpers/app.js";
import { tempDbUrl } from "../helpers/db.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";

const MIGRATIONS = join(import.meta.dirname, "..", "..", "migrations");

describe("a node's assignment index", () => {
  let t: TestApp;
  const tokens = new Map<string, string>();
  beforeEach(async () => {
    t = await createTestApp();
    for (const [id, token] of await registerNodes(t, ["n1", "n2"])) tokens.set(id, token);
  });
  afterEach(() => t.close());

  const poll = async (id: string) => {
    const r = await t.call("GET", `/api/v1/agents/${id}/assignments`, { token: tokens.get(id) });
    expect(r.status).toBe(200);
    return { index: Number(r.headers.get("x-llmgw-index")), shards: r.json.shards.length as number };
  };

  it("moves when placement gives the node shards, and placement rewrites no node row for it", async () => {
    expect(await poll("n1")).toEqual({ index: 0, shards: 0 });
    await t.db.run(sql`create table node_updates (id text)`);
    await t.db.run(
      sql`create trigger watch_nodes after update on nodes begin insert into node_updates values (new.id); end`,
    );
    await declareOneGpuDeployment(t, 2);
    const after = await Promise.all(["n1", "n2"].map(poll));
    // each node with shards has an index past 0; one without stays at 0
    expect(after.reduce((n, a) => n + a.shards, 0)).toBe(2);
    for (const a of after) expect(a.index > 0).toBe(a.shards > 0);
    expect(await t.db.all(sql`select id from node_updates`)).toEqual([]);
  });

  it("of a node deleted and registered again starts at 0, its row gone with the node", async () => {
    // (the shards placed on it stay placed: the node comes back to them)
    await declareOneGpuDeployment(t, 2);
    expect((await poll("n1")).index).toBeGreaterThan(0);
    expect((await t.admin("DELETE", "/api/v1/nodes/n1")).status).toBe(204);
    expect(await t.db.select().from(nodeAssignIndex).where(eq(nodeAssignIndex.nodeId, "n1"))).toEqual([]);
    const r = await t.call("POST", "/api/v1/agents/register", {
      token: t.adminToken,
      body: { ...registerBody("n1", nodeInventory("n1")), labels: { pool: "other" } },
    });
    tokens.set("n1", r.json.nodeToken);
    expect((await poll("n1")).index).toBe(0);
  });
});

describe("the migration that moves the index out of `nodes`", () => {
  it("keeps every node's index", async () => {
    // the migrations up to the one before, as a database made by the release before has them
    const older = mkdtempSync(join(tmpdir(), "llmgw-migrations-"));
    cpSync(MIGRATIONS, older, { recursive: true });
    const journalPath = join(older, "meta", "_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8"));
    const at = journal.entries.findIndex((e: { tag: string }) => e.tag === "0018_node-assign-index");
    expect(at).toBeGreaterThan(0);
    journal.entries = journal.entries.slice(0, at);
    writeFileSync(journalPath, JSON.stringify(journal));
    const tmp = tempDbUrl();
    const { client, db } = await openDb(tmp.url);
    try {
      await migrate(db, { migrationsFolder: older });
      for (const [id, index] of [
        ["a", 7],
        ["b", 0],
        ["c", 12],
      ] as const)
        await client.execute({
          sql: `insert into nodes (id, hostname, mgmt_addr, pool, labels, agent_version, token_hash, inventory, registered_at, last_seen_at, assign_index)
                values (?, ?, '10.0.0.1', 'p', '{}', '0.1.0', ?, '{}', 0, 0, ?)`,
          args: [id, id, `hash-${id}`, index],
        });
      await migrate(db, { migrationsFolder: MIGRATIONS });
      const rows = await db.select().from(nodeAssignIndex).orderBy(nodeAssignIndex.nodeId);
      expect(rows).toEqual([
        { nodeId: "a", assignIndex: 7 },
        { nodeId: "b", assignIndex: 0 },
        { nodeId: "c", assignIndex: 12 },
      ]);
      const columns = (await client.execute("select name from pragma_table_info('nodes')")).rows.map((r) => r.name);
      expect(columns).not.toContain("assign_index");
    } finally {
      client.close();
      tmp.cleanup();
      rmSync(older, { recursive: true, force: true });
    }
  });
});
