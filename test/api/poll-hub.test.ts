// The Node poll hub's watcher: it reads only the indexes that moved past the highest it saw, and still wakes a wait
// whose node moved between the poll's read and the wait (another instance's write, seen by no notify()).
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Store } from "../../api/db/client.js";
import { nodeAssignIndex as ix, shards } from "../../api/db/schema.js";
import { nodeAssignments } from "../../api/db/shards.js";
import { createPollHub, WAKE_PART } from "../../api/poll-hub.js";
import { migratedDb } from "../helpers/app.js";

let db: Awaited<ReturnType<typeof migratedDb>>;
const TICK_MS = 20;

/** Node rows and their indexes written directly, as another instance's placement leaves them. */
async function addNode(id: string, assignIndex: number, on = db) {
  await on.client.execute({
    sql: `insert into nodes (id, hostname, mgmt_addr, pool, labels, agent_version, token_hash, inventory, registered_at, last_seen_at)
          values (?, ?, '10.0.0.1', 'p', '{}', '0.1.0', ?, '{}', 0, 0)`,
    args: [id, id, `hash-${id}`],
  });
  await on.client.execute({ sql: "insert into node_assign_index values (?, ?)", args: [id, assignIndex] });
}
const moveTo = (id: string, assignIndex: number) => db.db.update(ix).set({ assignIndex }).where(eq(ix.nodeId, id));

/** Resolves true when `p` settles within `ms` (a deadline for a wake that must come), false after. */
const within = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

/**
 * `store` with `before(n)` awaited before its n-th select (counted from 1) runs: another instance's commit can land
 * between two reads of one look.
 */
function interleaved(store: Store, before: (n: number) => Promise<void>): Store {
  let n = 0;
  const delayed = (q: object, first: () => Promise<void>): object =>
    new Proxy(q, {
      get(t, p) {
        const v = Reflect.get(t, p, t) as unknown;
        if (typeof v !== "function") return v;
        if (p === "then")
          return (ok: (x: unknown) => unknown, fail: (e: unknown) => unknown) =>
            first().then(() => (v as (a: unknown, b: unknown) => unknown).call(t, ok, fail), fail);
        return (...a: unknown[]) => {
          const r = (v as (...x: unknown[]) => unknown).apply(t, a);
          return r && typeof r === "object" && r !== t ? delayed(r, first) : r === t ? delayed(t, first) : r;
        };
      },
    });
  const db = new Proxy(store.db, {
    get(t, p) {
      if (p !== "select") return Reflect.get(t, p, t);
      return (...a: Parameters<Store["db"]["select"]>) => {
        const k = ++n;
        return delayed(t.select(...a), () => before(k));
      };
    },
  });
  return { ...store, db };
}

/** Runs `fn` on a database of its own (apart from the nodes the other tests move), closed after. */
async function onOwnDb<T>(fn: (other: Awaited<ReturnType<typeof migratedDb>>) => Promise<T>): Promise<T> {
  const other = await migratedDb();
  try {
    return await fn(other);
  } finally {
    other.close();
  }
}

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

  it("answers at once a poll that parks after the look that found its node moved (it read before the commit)", async () => {
    await onOwnDb(async (other) => {
      await addNode("g", 1, other);
      await addNode("g2", 1, other);
      const stop = new AbortController();
      // the next look an hour away: only a notify looks
      const hub = createPollHub(other.store, 3_600_000, () => {}, stop.signal);
      const parked = hub.wait("g2", 1, 3_600_000);
      // a placement moves both; g's poll read index 1 before the commit and is still on its way in
      await other.client.execute("update node_assign_index set assign_index = 2 where node_id in ('g', 'g2')");
      hub.notify();
      expect(await within(parked, 10_000)).toBe(true);
      // the look that woke g2 read g's row too: g's poll, parking only now with the old index, answers at once
      expect(await within(hub.wait("g", 1, 3_600_000), 1_000)).toBe(true);
      // g is deleted and registered again (its index back to 0) while g2 moves on: after the look that finds g2, a
      // poll of g with index 0 waits (the look before is forgotten), rather than being answered at once again and again
      await other.client.execute("update node_assign_index set assign_index = 0 where node_id = 'g'");
      await other.client.execute("update node_assign_index set assign_index = 3 where node_id = 'g2'");
      const next = hub.wait("g2", 2, 3_600_000);
      hub.notify();
      expect(await within(next, 10_000)).toBe(true);
      expect(await within(hub.wait("g", 0, 3_600_000), 100)).toBe(false);
      // and one that read the index the look found waits
      expect(await within(hub.wait("g2", 3, 3_600_000), 100)).toBe(false);
      stop.abort();
    });
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
    await db.db.update(ix).set({ assignIndex: 9 }).where(sql`${ix.nodeId} in ('e1', 'e2', 'e3')`);
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
    await onOwnDb(async (other) => {
      await addNode("f", 1, other);
      const stop = new AbortController();
      const hub = createPollHub(other.store, 3_600_000, () => {}, stop.signal);
      const woken = hub.wait("f", 1, 3_600_000);
      await other.client.execute("update node_assign_index set assign_index = 2 where node_id = 'f'");
      await other.client.execute("alter table shards rename to shards_gone");
      hub.notify();
      expect(await within(woken, 10_000)).toBe(true);
      expect(await woken).toBeUndefined();
      stop.abort();
    });
  });

  it("wakes every node a commit moved though a joined node's row, read later in the same look, showed it first", async () => {
    await onOwnDb(async (other) => {
      await addNode("x", 1, other);
      await addNode("y", 1, other);
      let selects = 0;
      let commitAt = -1;
      const store = interleaved(other.store, async (n) => {
        selects = n;
        // another instance's placement moves both nodes between this look's range read and its read of x's row
        if (n === commitAt)
          await other.client.execute("update node_assign_index set assign_index = 2 where node_id in ('x', 'y')");
      });
      const stop = new AbortController();
      const hub = createPollHub(store, 3_600_000, () => {}, stop.signal);
      const y = hub.wait("y", 1, 3_600_000);
      hub.notify();
      await vi.waitFor(() => expect(selects).toBeGreaterThanOrEqual(3));
      // x's poll read index 1 and waits; the next look reads the moved range (nothing yet), then x's row (moved)
      const x = hub.wait("x", 1, 3_600_000);
      commitAt = selects + 2;
      hub.notify();
      expect(await within(x, 10_000)).toBe(true);
      // a later look finds y, moved by the same commit
      await vi.waitFor(
        async () => {
          hub.notify();
          expect(await within(y, 50)).toBe(true);
        },
        { timeout: 10_000 },
      );
      stop.abort();
    });
  });

  it("looks again at once when told of a write while a look is on its way", async () => {
    await onOwnDb(async (other) => {
      await addNode("z", 1, other);
      let release = () => {};
      const gate = new Promise<void>((ok) => {
        release = ok;
      });
      let selects = 0;
      // the first look's last read (the highest index) waits at the gate
      const store = interleaved(other.store, async (n) => {
        selects = n;
        if (n === 3) await gate;
      });
      const stop = new AbortController();
      const hub = createPollHub(store, 3_600_000, () => {}, stop.signal);
      const z = hub.wait("z", 1, 3_600_000);
      hub.notify();
      await vi.waitFor(() => expect(selects).toBe(3));
      // this instance's placement commits a move of z and says so while that look is still on its way …
      await other.client.execute("update node_assign_index set assign_index = 2 where node_id = 'z'");
      hub.notify();
      // … and another poll parks after that (it sets the usual next look, an hour away)
      await addNode("z2", 1, other);
      const z2 = hub.wait("z2", 1, 3_600_000);
      release();
      expect(await within(z, 5_000)).toBe(true);
      expect(await within(z2, 100)).toBe(false);
      stop.abort();
    });
  });

  it("does not wake a wait whose index is current", async () => {
    const stop = new AbortController();
    const hub = createPollHub(db.store, TICK_MS, () => {}, stop.signal);
    const [row] = await db.db.select({ i: ix.assignIndex }).from(ix).where(eq(ix.nodeId, "a"));
    const current = hub.wait("a", row!.i, 3_600_000);
    // a move of another node, read by the watcher, leaves it waiting
    await db.db
      .update(ix)
      .set({ assignIndex: sql`${ix.assignIndex} + 10` })
      .where(eq(ix.nodeId, "c"));
    const c = await db.db.select({ i: ix.assignIndex }).from(ix).where(eq(ix.nodeId, "c"));
    expect(c[0]!.i).toBeGreaterThan(row!.i);
    expect(await within(current, 20 * TICK_MS)).toBe(false);
    stop.abort();
    await current;
  });

  /** Wakes `count` parked polls at once; where a call that arrives as the first answers go out falls among them. */
  async function callAmongAnswers(count: number): Promise<{ polls: number; callAt: number }> {
    return onOwnDb(async (other) => {
      const ids = Array.from({ length: count }, (_, i) => `w${i}`);
      for (const id of ids) await addNode(id, 1, other);
      const stop = new AbortController();
      const hub = createPollHub(other.store, 3_600_000, () => {}, stop.signal);
      const order: string[] = [];
      const polls = ids.map((id) =>
        hub.wait(id, 1, 3_600_000).then(() => {
          // a call that arrives as the first answers go out (a timer stands in for its I/O callback)
          if (!order.length) setTimeout(() => order.push("another call"), 0);
          order.push("poll");
        }),
      );
      await other.client.execute("update node_assign_index set assign_index = 2");
      hub.notify();
      await Promise.all(polls);
      await new Promise((r) => setTimeout(r, 0));
      stop.abort();
      return { polls: order.filter((x) => x === "poll").length, callAt: order.indexOf("another call") };
    });
  }

  it("answers the polls of a thousand-node change in one go, before the calls that arrive meanwhile", async () => {
    // in smaller parts the first answered agents' status reports and next polls went before the later answers
    expect(await callAmongAnswers(1000)).toEqual({ polls: 1000, callAt: 1000 });
  });

  it("answers the polls of a larger change in parts, letting the calls that arrive meanwhile in between", async () => {
    // three parts: a call that arrives as the first part's answers go out is let in before the last part
    const { polls, callAt } = await callAmongAnswers(3 * WAKE_PART);
    expect(polls).toBe(3 * WAKE_PART);
    expect(callAt).toBeLessThan(3 * WAKE_PART);
  });
});
