// The file database's write queue: writes that queue behind a running one commit together, each in a savepoint of
// its own — one that throws rolls back alone, the others commit, and each resolves only once its commit is done.
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { WrittenEvent } from "../../api/db/client.js";
import { insertEvents } from "../../api/db/events.js";
import { openDb } from "../../api/db/open.js";
import { events, joinTokens } from "../../api/db/schema.js";
import { migratedDb } from "../helpers/app.js";

let m: Awaited<ReturnType<typeof migratedDb>>;
beforeEach(async () => {
  m = await migratedDb();
});
afterEach(() => m.close());

const token = (name: string) => ({ id: name, name, hash: `hash-${name}`, createdAt: 1 });
const names = async () => (await m.db.select({ name: joinTokens.name }).from(joinTokens)).map((r) => r.name).sort();

it("commits the writes queued behind a running one together; one that throws rolls back alone", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = m.store.write(async (tx) => {
    await tx.insert(joinTokens).values(token("first"));
    await held;
  });
  const ran: string[] = [];
  const a = m.store.write(async (tx) => {
    await tx.insert(joinTokens).values(token("a"));
    ran.push("a");
    return "a done";
  });
  const bad = m.store.write(async (tx) => {
    await tx.insert(joinTokens).values(token("bad"));
    ran.push("bad");
    throw new Error("bad's own error");
  });
  const c = m.store.write(async (tx) => {
    // what an earlier write of its group wrote is there to read
    const seen = await tx.select().from(joinTokens).where(eq(joinTokens.name, "a"));
    await tx.insert(joinTokens).values(token("c"));
    ran.push("c");
    return seen.length;
  });
  release();
  await first;
  // a resolves once its group committed: by then c, after it in the group, has run
  expect(await a).toBe("a done");
  expect(ran).toEqual(["a", "bad", "c"]);
  await expect(bad).rejects.toThrow("bad's own error");
  expect(await c).toBe(1);
  expect(await names()).toEqual(["a", "c", "first"]);
});

it("says the events of the writes that committed, not those of one that rolled back", async () => {
  const said: WrittenEvent[][] = [];
  m.store.onEvents?.((e) => said.push(e));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = m.store.write(async () => held);
  const ok = m.store.write((tx) => insertEvents(tx, 1, [{ type: "node_registered", nodeId: null, message: "kept" }]));
  const gone = m.store.write(async (tx) => {
    await insertEvents(tx, 1, [{ type: "node_registered", nodeId: null, message: "rolled back" }]);
    throw new Error("no");
  });
  release();
  await Promise.allSettled([first, ok, gone]);
  expect(said.map((e) => e.map((x) => x.message))).toEqual([["kept"]]);
  expect((await m.db.select({ message: events.message }).from(events)).map((e) => e.message)).toEqual(["kept"]);
});

it("rolls back alone a write whose statement the database refuses (a constraint), the rest of its group committing", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = m.store.write(async () => held);
  const a = m.store.write((tx) => tx.insert(joinTokens).values(token("a")));
  // the same id again: the database refuses the statement
  const dup = m.store.write((tx) => tx.insert(joinTokens).values({ ...token("dup"), id: "a" }));
  const c = m.store.write((tx) => tx.insert(joinTokens).values(token("c")));
  release();
  await first;
  await a;
  await expect(dup).rejects.toMatchObject({ cause: { message: expect.stringMatching(/UNIQUE constraint failed/) } });
  await c;
  expect(await names()).toEqual(["a", "c"]);
});

it("runs a turn alone: the writes queued before it commit first, those queued after it wait until it settles", async () => {
  const order: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = m.store.write(async () => held);
  const before = m.store.write(async (tx) => {
    await tx.insert(joinTokens).values(token("before"));
    order.push("before");
  });
  let endTurn!: () => void;
  const turn = m.store.turn!(async () => {
    // no transaction of the store's is open: what was queued before committed, and a second connection writes
    order.push(`turn sees ${(await names()).join(",")}`);
    const second = await openDb(m.url);
    try {
      await second.db.insert(joinTokens).values(token("second connection"));
    } finally {
      second.client.close();
    }
    await new Promise<void>((r) => (endTurn = r));
    order.push("turn over");
    return "turn's value";
  });
  const after = m.store.write(async (tx) => {
    await tx.insert(joinTokens).values(token("after"));
    order.push("after");
  });
  release();
  await Promise.all([first, before]);
  await expect.poll(() => order.length).toBe(2);
  endTurn();
  expect(await turn).toBe("turn's value");
  await after;
  expect(order).toEqual(["before", "turn sees before", "turn over", "after"]);
  expect(await names()).toEqual(["after", "before", "second connection"]);
});

it("a turn that throws fails alone; the writes behind it run", async () => {
  const turn = m.store.turn!(async () => {
    throw new Error("the turn's own error");
  });
  const after = m.store.write((tx) => tx.insert(joinTokens).values(token("after")));
  await expect(turn).rejects.toThrow("the turn's own error");
  await after;
  expect(await names()).toEqual(["after"]);
});
