// How a store's writes reach the database: on a file or a database server they take turns, those that queued behind
// a running transaction sharing the next one (a server's open transactions each hold one of its connections — sqld
// runs each on a thread and aborts past 4,096 — and wait for its one writer anyway); in a Worker isolate each write is
// a transaction of its own, at once. Statement writes (the agents' frequent ones) go to a server as batches: those made
// while one is on its way share the next.
import { expect, it } from "vitest";
import { createStore, type Db, type Tx } from "../../api/db/client.js";
import { dbFailure } from "../../api/db/db-errors.js";
import { MAX_BATCH, MAX_GROUP, MAX_WAITING } from "../../api/db/write-limits.js";

/** A database whose transactions wait until released, counting how many are open at once. */
function heldDb() {
  const open = { now: 0, most: 0, began: 0 };
  const releases: (() => void)[] = [];
  // the savepoints of a group's writes
  const tx = { run: async () => {} };
  const db = {
    async transaction<T>(body: (t: Tx) => Promise<T>): Promise<T> {
      open.now++;
      open.began++;
      open.most = Math.max(open.most, open.now);
      try {
        await new Promise<void>((r) => releases.push(r));
        return await body(tx as unknown as Tx);
      } finally {
        open.now--;
      }
    },
  };
  return {
    db: db as unknown as Db,
    open,
    releaseAll: () => {
      for (const r of releases.splice(0)) r();
    },
  };
}

/** Releases held transactions until every one of `writes` settled; what each came to. */
async function drain(h: { releaseAll(): void }, writes: Promise<unknown>[]) {
  let settled = false;
  const all = Promise.allSettled(writes).finally(() => (settled = true));
  while (!settled) {
    h.releaseAll();
    await new Promise((r) => setImmediate(r));
  }
  return all;
}

it("on a database server, one transaction at a time; the writes queued behind it share the next", async () => {
  const h = heldDb();
  const store = createStore(h.db, { serialize: true, file: false });
  const count = MAX_GROUP + 10;
  const results = await drain(
    h,
    Array.from({ length: count }, (_, i) => store.write(async () => i)),
  );
  expect(results.map((r) => (r.status === "fulfilled" ? r.value : r.reason))).toEqual(
    Array.from({ length: count }, (_, i) => i),
  );
  expect(h.open.most).toBe(1);
  // the first alone, then a group of MAX_GROUP, then the rest
  expect(h.open.began).toBe(3);
});

it("in a Worker isolate, each write is a transaction of its own, at once", async () => {
  const h = heldDb();
  const store = createStore(h.db, { serialize: false, file: false });
  const writes = Array.from({ length: 5 }, (_, i) => store.write(async () => i));
  await new Promise((r) => setImmediate(r));
  expect(h.open.now).toBe(5);
  await drain(h, writes);
  expect(h.open.began).toBe(5);
});

/** A database server whose write batches wait until released; a batch with a statement `bad` fails whole. */
function heldServer() {
  const sent: string[][] = [];
  const releases: (() => void)[] = [];
  const $client = {
    async batch(stmts: { sql: string }[], mode: string) {
      expect(mode).toBe("write");
      const sqls = stmts.map((s) => s.sql);
      sent.push(sqls);
      await new Promise<void>((r) => releases.push(r));
      if (sqls.includes("bad")) throw new Error("SQLITE_CONSTRAINT: FOREIGN KEY constraint failed");
      return sqls.map((s) => ({ rowsAffected: Number(s.slice(1)) }));
    },
  };
  return {
    db: { $client } as unknown as Db,
    sent,
    releaseAll: () => {
      for (const r of releases.splice(0)) r();
    },
  };
}

it("on a database server, statement writes made while a batch is on its way go together in the next", async () => {
  const h = heldServer();
  const store = createStore(h.db, { serialize: true, file: false });
  const calls = Array.from({ length: 5 }, (_, i) => store.writeStatements([{ sql: `u${i}`, args: [] }, { sql: "u0" }]));
  const all = drain(h, calls);
  expect((await all).map((r) => (r.status === "fulfilled" ? r.value : r.reason))).toEqual(
    Array.from({ length: 5 }, (_, i) => [i, 0]),
  );
  // the first alone, then the four that came while it was on its way
  expect(h.sent.map((b) => b.length)).toEqual([2, 8]);
});

it("a batch that fails is sent again call by call: only the call whose statement failed gets the error", async () => {
  const h = heldServer();
  const store = createStore(h.db, { serialize: true, file: false });
  const first = store.writeStatements([{ sql: "u1" }]);
  const rest = [store.writeStatements([{ sql: "u2" }]), store.writeStatements([{ sql: "bad" }])];
  const all = drain(h, [first, ...rest]);
  const [a, b, c] = await all;
  expect([a, b]).toEqual([
    { status: "fulfilled", value: [1] },
    { status: "fulfilled", value: [2] },
  ]);
  expect(c).toMatchObject({ status: "rejected", reason: { message: /FOREIGN KEY/ } });
  expect(h.sent).toEqual([["u1"], ["u2", "bad"], ["u2"], ["bad"]]);
});

it("in a Worker isolate, each call's statements are a batch of their own, at once", async () => {
  const h = heldServer();
  const store = createStore(h.db, { serialize: false, file: false });
  const calls = [store.writeStatements([{ sql: "u1" }]), store.writeStatements([{ sql: "u2" }])];
  await new Promise((r) => setImmediate(r));
  expect(h.sent).toEqual([["u1"], ["u2"]]);
  h.releaseAll();
  expect(await Promise.all(calls)).toEqual([[1], [2]]);
});

it("a batch takes up to MAX_BATCH of the calls that queued behind the one on its way", async () => {
  const h = heldServer();
  const store = createStore(h.db, { serialize: true, file: false });
  const calls = Array.from({ length: MAX_BATCH + 3 }, () => store.writeStatements([{ sql: "u1" }]));
  const all = drain(h, calls);
  expect((await all).every((r) => r.status === "fulfilled")).toBe(true);
  expect(h.sent.map((b) => b.length)).toEqual([1, MAX_BATCH, 2]);
});

it("past MAX_WAITING writes held, another fails at once as the database busy; the ones held still commit", async () => {
  const h = heldDb();
  const store = createStore(h.db, { serialize: true, file: false });
  const held = Array.from({ length: MAX_WAITING + 1 }, (_, i) => store.write(async () => i)); // one runs, the rest wait
  const refused = await store.write(async () => "late").catch((e: unknown) => dbFailure(e));
  expect(refused).toMatchObject({ status: 503, kind: "busy", cause: expect.stringMatching(/1024 writes waiting/) });
  const results = await drain(h, held);
  expect(results.every((r) => r.status === "fulfilled")).toBe(true);
});

it("past MAX_WAITING statement writes held on a server, another fails at once as the database busy", async () => {
  const h = heldServer();
  const store = createStore(h.db, { serialize: true, file: false });
  const held = Array.from({ length: MAX_WAITING + 1 }, () => store.writeStatements([{ sql: "u1" }]));
  const refused = await store.writeStatements([{ sql: "u1" }]).catch((e: unknown) => dbFailure(e));
  expect(refused).toMatchObject({ status: 503, kind: "busy" });
  const all = drain(h, held);
  expect((await all).every((r) => r.status === "fulfilled")).toBe(true);
});

it("a group whose transaction the server ended fails with the server's reason, not the rollback's that follows it", async () => {
  const ended = Object.assign(new Error("Transaction timed out"), { code: "TRANSACTION_TIMEOUT" });
  let statements = 0;
  // the second savepoint meets the ended transaction; the driver's rollback then fails too, as it does on a server
  const tx = {
    run: async () => {
      if (++statements === 3) throw ended;
    },
  };
  const db = {
    async transaction<T>(body: (t: Tx) => Promise<T>): Promise<T> {
      try {
        return await body(tx as unknown as Tx);
      } catch {
        throw new Error("SQLITE_UNKNOWN: cannot rollback - no transaction is active");
      }
    },
  };
  const store = createStore(db as unknown as Db, { serialize: true, file: false });
  let release!: () => void;
  const first = store.write(() => new Promise<void>((r) => (release = r)));
  const group = [store.write(async () => 1), store.write(async () => 2)];
  await new Promise((r) => setImmediate(r));
  release();
  await first;
  const failures = await Promise.all(
    group.map((w) =>
      w.then(
        () => undefined,
        (e: unknown) => dbFailure(e),
      ),
    ),
  );
  expect(failures).toEqual([
    expect.objectContaining({ kind: "busy", cause: expect.stringMatching(/TRANSACTION_TIMEOUT/) }),
    expect.objectContaining({ kind: "busy", cause: expect.stringMatching(/TRANSACTION_TIMEOUT/) }),
  ]);
});
