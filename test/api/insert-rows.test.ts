// Placement's bulk inserts: every row arrives with its own values and types, however many statements they take (one
// statement text per table and columns, whatever the number of rows), and they roll back with the transaction they
// ran in.
import { asc } from "drizzle-orm";
import { afterEach, beforeEach, expect, it } from "vitest";
import { insertRows, ROWS_PER_INSERT } from "../../api/db/insert-rows.js";
import { allocations, replicas } from "../../api/db/schema.js";
import { migratedDb } from "../helpers/app.js";

let m: Awaited<ReturnType<typeof migratedDb>>;
beforeEach(async () => {
  m = await migratedDb();
});
afterEach(() => m.close());

const devices = (node: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ nodeId: node, deviceId: i, shardId: `${node}-s${i >> 3}` }));
const stored = () => m.db.select().from(allocations).orderBy(asc(allocations.nodeId), asc(allocations.deviceId));

it("inserts every row with its own values, across statements and a last part of its own", async () => {
  const rows = devices("a", ROWS_PER_INSERT * 2 + 37);
  await m.store.write((tx) => insertRows(tx, allocations, rows));
  // the same row counts again, other values: the statements built for the first call are run with these
  const more = devices("b", ROWS_PER_INSERT * 2 + 37);
  await m.store.write((tx) => insertRows(tx, allocations, more));
  expect(await stored()).toEqual([...rows, ...more]);
});

it("rolls back with the transaction it ran in", async () => {
  await m.store
    .write(async (tx) => {
      await insertRows(tx, allocations, devices("a", 12));
      throw new Error("undo");
    })
    .catch(() => undefined);
  expect(await stored()).toEqual([]);
});

it("stores the values of every column given, of any table", async () => {
  const rows = [1, 2, 3].map((seq) => ({
    id: `r${seq}`,
    deployment: "d",
    profile: "p",
    fingerprint: `f${seq}`,
    seq,
    createdAt: 1000 + seq,
  }));
  await m.store.write((tx) => insertRows(tx, replicas, rows));
  expect(await m.db.select().from(replicas).orderBy(asc(replicas.seq))).toEqual(rows);
});

it("keeps each value's type: a string of digits stays a string, a large number its every digit", async () => {
  const rows = [
    { id: "00123", deployment: "d", profile: "p", fingerprint: "1e3", seq: 7, createdAt: 1_700_000_000_123 },
    { id: "r-2", deployment: "d", profile: "p", fingerprint: "", seq: 8, createdAt: 0 },
  ];
  await m.store.write((tx) => insertRows(tx, replicas, rows));
  expect(await m.db.select().from(replicas).orderBy(asc(replicas.seq))).toEqual(rows);
});

it("names a key that is not a column of the table, and writes nothing", async () => {
  const bad = [{ nodeId: "a", deviceId: 0, shardId: "s", colour: "blue" }] as never[];
  await expect(m.store.write((tx) => insertRows(tx, allocations, bad))).rejects.toThrow(
    /allocations has no column colour/,
  );
  expect(await stored()).toEqual([]);
});
