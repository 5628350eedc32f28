// A statement built once and run on whatever it is given: the database, or the open transaction of a write (a group's
// savepoint included) — a prepared statement that ran beside the transaction would neither see its writes nor roll
// back with it.
import { eq, sql } from "drizzle-orm";
import { afterEach, beforeEach, expect, it } from "vitest";
import { prepared } from "../../api/db/prepared.js";
import { joinTokens } from "../../api/db/schema.js";
import { migratedDb } from "../helpers/app.js";

let m: Awaited<ReturnType<typeof migratedDb>>;
beforeEach(async () => {
  m = await migratedDb();
});
afterEach(() => m.close());

const uses = prepared((q) =>
  q
    .select({ uses: joinTokens.uses })
    .from(joinTokens)
    .where(eq(joinTokens.id, sql.placeholder("id")))
    .prepare(),
);
const setUses = prepared((q) =>
  q
    .update(joinTokens)
    .set({ uses: sql`${sql.placeholder("n")}` })
    .where(eq(joinTokens.id, sql.placeholder("id")))
    .prepare(),
);
const usesOf = async (id: string) => (await uses(m.db, { id }))[0]?.uses;

beforeEach(async () => {
  for (const id of ["a", "b"]) await m.db.insert(joinTokens).values({ id, hash: `hash-${id}`, createdAt: 1 });
});

it("runs on the database, with each call's values", async () => {
  await setUses(m.db, { id: "a", n: 3 });
  await setUses(m.db, { id: "b", n: 5 });
  expect([await usesOf("a"), await usesOf("b")]).toEqual([3, 5]);
});

it("runs inside the transaction it is given: it reads the transaction's writes and rolls back with it", async () => {
  const seen = await m.store
    .write(async (tx) => {
      await tx.update(joinTokens).set({ uses: 7 }).where(eq(joinTokens.id, "a"));
      await setUses(tx, { id: "b", n: 9 });
      const inside = [(await uses(tx, { id: "a" }))[0]?.uses, (await uses(tx, { id: "b" }))[0]?.uses];
      throw Object.assign(new Error("roll back"), { inside });
    })
    .catch((e: { inside: unknown }) => e.inside);
  expect(seen).toEqual([7, 9]);
  expect([await usesOf("a"), await usesOf("b")]).toEqual([0, 0]);
});

it("runs in the savepoint of a write that shares its group, and rolls back alone with it", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = m.store.write(() => held);
  const kept = m.store.write((tx) => setUses(tx, { id: "a", n: 4 }));
  const undone = m.store.write(async (tx) => {
    await setUses(tx, { id: "b", n: 6 });
    throw new Error("undone");
  });
  release();
  await first;
  await kept;
  await expect(undone).rejects.toThrow("undone");
  expect([await usesOf("a"), await usesOf("b")]).toEqual([4, 0]);
});

it("is built once per database, its transactions included, and runs on each database it is given", async () => {
  let builds = 0;
  const count = prepared((q) => {
    builds++;
    return q
      .select({ id: joinTokens.id })
      .from(joinTokens)
      .where(eq(joinTokens.id, sql.placeholder("id")))
      .prepare();
  });
  const other = await migratedDb();
  try {
    await count(m.db, { id: "a" });
    await m.store.write((tx) => count(tx, { id: "b" }));
    expect((await count(m.db, { id: "b" })).map((r) => r.id)).toEqual(["b"]);
    expect(builds).toBe(1);
    await other.db.insert(joinTokens).values({ id: "a", hash: "hash-a", createdAt: 1 });
    await setUses(other.db, { id: "a", n: 8 });
    await setUses(m.db, { id: "a", n: 2 });
    expect([(await uses(other.db, { id: "a" }))[0]?.uses, await usesOf("a")]).toEqual([8, 2]);
    expect((await count(other.db, { id: "b" })).length).toBe(0);
    expect(builds).toBe(2);
  } finally {
    other.close();
  }
});
