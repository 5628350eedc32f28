// `column IN (…)` bound as one JSON argument (placement's deletes and index updates): exactly the rows named, however
// many — past SQLite's 32,766 bound values a statement may have, where drizzle's inArray fails — by the column's index.
import { count, inArray } from "drizzle-orm";
import { afterEach, beforeEach, expect, it } from "vitest";
import { inJson } from "../../api/db/in-json.js";
import { insertRows } from "../../api/db/insert-rows.js";
import { allocations } from "../../api/db/schema.js";
import { migratedDb } from "../helpers/app.js";

let m: Awaited<ReturnType<typeof migratedDb>>;
beforeEach(async () => {
  m = await migratedDb();
});
afterEach(() => m.close());

const SHARDS = 48_000;
const rows = Array.from({ length: SHARDS }, (_, i) => ({ nodeId: `n${i >> 3}`, deviceId: i & 7, shardId: `s${i}` }));

it("deletes exactly the rows named, more of them than a statement may bind", async () => {
  await m.store.write((tx) => insertRows(tx, allocations, rows));
  const gone = rows.filter((_, i) => i % 4 !== 0).map((r) => r.shardId); // 36,000 ids
  const bound = await m.db
    .delete(allocations)
    .where(inArray(allocations.shardId, gone))
    .catch((e: unknown) => String((e as { cause?: unknown }).cause));
  expect(bound).toMatch(/too many SQL variables/);
  await m.store.write((tx) => tx.delete(allocations).where(inJson(allocations.shardId, gone)));
  const left = await m.db.select({ id: allocations.shardId }).from(allocations);
  const kept = rows.filter((_, i) => i % 4 === 0).map((r) => r.shardId);
  expect(left.map((r) => r.id).sort()).toEqual(kept.sort());
});

it("matches numbers as numbers and finds nothing for no values", async () => {
  await m.store.write((tx) => insertRows(tx, allocations, rows.slice(0, 16)));
  const [some] = await m.db
    .select({ n: count() })
    .from(allocations)
    .where(inJson(allocations.deviceId, [0, 7]));
  expect(some!.n).toBe(4);
  const [none] = await m.db.select({ n: count() }).from(allocations).where(inJson(allocations.shardId, []));
  expect(none!.n).toBe(0);
});

it("looks the rows up by the column's index rather than scanning the table", async () => {
  const q = m.db
    .select()
    .from(allocations)
    .where(inJson(allocations.shardId, ["s1", "s2"]))
    .toSQL();
  const plan = await m.client.execute({ sql: `explain query plan ${q.sql}`, args: q.params as string[] });
  const steps = plan.rows.map((r) => String(r.detail));
  expect(steps.some((d) => /^SEARCH allocations USING (COVERING )?INDEX/.test(d))).toBe(true);
  expect(steps.some((d) => /^SCAN allocations\b/.test(d))).toBe(false);
});
