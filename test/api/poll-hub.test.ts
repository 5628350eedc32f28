// The Node poll hub's watcher: it reads only the indexes that moved past the highest it saw, and still wakes a wait
// whose node moved between the poll's read and the wait (another instance's write, seen by no notify()).
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodes, shards } from "../../api/db/schema.js";
import { nodeAssignments } from "../../api/db/shards.js";
import { createPollHub } from "../../api/poll-hub.js";
import { migratedDb } from "../helpers/app.js";

let db: Awaited<ReturnType<typeof migratedDb>>;
const TICK_MS = 20;

/** Node rows written directly, as another instance's placement leaves them. */
async function addNode(id: string, assignIndex: number, on = db) {
  await on.client.execute({
    sql: `insert into nodes (id, hostname, mgmt_addr, pool, labels, agent_version, token_hash, inventory, registered_at, last_seen_at, assign_index)
          values (?, ?, '10.0.0.1', 'p', '{}', '0.1.0', ?, '{}', 0, 0, ?)`,
    args: [id, id, `hash-${id}`, assignIndex],
  });
}
const moveTo = (id: string, assignIndex: number) => db.db.update(nodes).set({ assignIndex }).where(eq(nodes.id, id));

/** Resolves true when `p` settles within `ms` (a deadline for a wake that must come), false after. */
const within = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

beforeAll(async () => {
  db = await migratedDb();
  for (const [id, index] of [
    ["a", 3],
    ["b", 5],
    ["c", 0],
  ] as const)
    await addNode(id, index);
});
afterAll(() => db.close());

describe("createPollHub's watcher", () => {
  it("wakes a wait when its node's index moves, written elsewhere (no notify)", async () => {
    const stop = new AbortController();
    const hub = createPollHub(db.store, TICK_MS, () => {}, stop.signal);
    const woke = hub.wait("a", 3, 3_600_000);
    await moveTo("a", 6);
    expect(await within(woke, 10_000)).toBe(true);
    stop.abort();
  });

  it("wakes a wait whose node moved after the poll read it but before it waited, though the watcher is past it", async () => {
    const stop = new AbortController();
    const hub = createPollHub(db.store, TICK_MS, () => {}, stop.signal);
    // a wait on c keeps the watcher looking; it sees b move to 7 (nobody waits on b yet) and goes past it
    const other = hub.wait("c", 0, 3_600_000);
    await moveTo("b", 7);
    await moveTo("c", 8);
    expect(await within(other, 10_000)).toBe(true);
    // b's poll read index 5 before the move, and only now waits with it: the move is found at the next look
    const late = hub.wait("b", 5, 3_600_000);
    expect(await within(late, 10_000)).toBe(true);
    stop.abort();
  });

  it("wakes a wait whose node's index is below the wait's at the first look (restored after the poll read it)", async () => {
    await addNode("d", 2);
    const stop = new AbortController();
    const hub = createPollHub(db.store, TICK_MS, () => {}, stop.signal);
    const restored = hub.wait("d", 4, 3_600_000);
    expect(await within(restored, 10_000)).toBe(true);
    stop.abort();
  });

  it("hands every poll it wakes at once its node's index and shards, read together after the indexes", async () => {
    const ids = ["e1", "e2", "e3"];
    for (const id of ids) await addNode(id, 1);
    const spec = (id: string, n: number) => JSON.stringify({ shardId: `${id}-s${n}`, note: `${id} shard ${n}` });
    await db.db.insert(shards).values([
      { id: "e1-s1", replicaId: "r1", nodeId: "e1", rank: 0, spec: spec("e1", 1) },
      { id: "e1-s0", replicaId: "r0", nodeId: "e1", rank: 0, spec: spec("e1", 0) },
      { id: "e2-s0", replicaId: "r2", nodeId: "e2", rank: 1, spec: spec("e2", 0) },
    ]);
    const stop = new AbortController();
    const hub = createPollHub(db.store, 3_600_000, () => {}, stop.signal);
    const woken = ids.map((id) => hub.wait(id, 1, 3_600_000));
    // one placement moves all three (e3 is left without shards)
    await db.db.update(nodes).set({ assignIndex: 9 }).where(sql`${nodes.id} in ('e1', 'e2', 'e3')`);
    hub.notify();
    const got = await Promise.all(woken);
    // what each poll would have read for itself
    expect(got).toEqual(await Promise.all(ids.map((id) => nodeAssignments(db.store, id))));
    expect(got.map((a) => a?.shards.map((x) => (x as { shardId: string }).shardId))).toEqual([
      ["e1-s0", "e1-s1"],
      ["e2-s0"],
      [],
    ]);
    expect(got.every((a) => a?.index === 9)).toBe(true);
    stop.abort();
  });

  it("wakes its polls all the same when reading their shards fails: each poll then reads for itself", async () => {
    const other = await migratedDb();
    try {
      await addNode("f", 1, other);
      const stop = new AbortController();
      const hub = createPollHub(other.store, 3_600_000, () => {}, stop.signal);
      const woken = hub.wait("f", 1, 3_600_000);
      await other.client.execute("update nodes set assign_index = 2 where id = 'f'");
      await other.client.execute("alter table shards rename to shards_gone");
      hub.notify();
      expect(await within(woken, 10_000)).toBe(true);
      expect(await woken).toBeUndefined();
      stop.abort();
    } finally {
      other.close();
    }
  });

  it("does not wake a wait whose index is current", async () => {
    const stop = new AbortController();
    const hub = createPollHub(db.store, TICK_MS, () => {}, stop.signal);
    const [row] = await db.db.select({ i: nodes.assignIndex }).from(nodes).where(eq(nodes.id, "a"));
    const current = hub.wait("a", row!.i, 3_600_000);
    // a move of another node, read by the watcher, leaves it waiting
    await db.db
      .update(nodes)
      .set({ assignIndex: sql`${nodes.assignIndex} + 10` })
      .where(eq(nodes.id, "c"));
    const c = await db.db.select({ i: nodes.assignIndex }).from(nodes).where(eq(nodes.id, "c"));
    expect(c[0]!.i).toBeGreaterThan(row!.i);
    expect(await within(current, 20 * TICK_MS)).toBe(false);
    stop.abort();
    await current;
  });
});
