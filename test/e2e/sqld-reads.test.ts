// Reads on a libSQL server go in batches: each statement outside a transaction costs sqld a connection of its own,
// and at fleet size every poll reads a few rows. Real sqld: it takes the read-only batches, and every caller gets
// its own rows.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDb } from "../../api/db/open.js";
import { batchingReads } from "../../api/db/read-batches.js";
import { countingClient, seedKv, startSqld } from "../helpers/instances.js";

let server: Awaited<ReturnType<typeof startSqld>>;
beforeAll(async () => {
  server = await startSqld();
  await seedKv(server.url);
});
afterAll(async () => {
  await server?.close();
});

for (const scheme of ["ws", "http"] as const)
  it(`over ${scheme}: reads asked for together are one batch; a failing one fails alone`, async () => {
    const { client, calls } = countingClient(server.url.replace("http:", `${scheme}:`));
    const c = batchingReads(client, (send) => void setImmediate(send));
    const got = await Promise.all(
      Array.from({ length: 40 }, (_, i) => c.execute({ sql: "select v from kv where k = ?", args: [`k${i}`] })),
    );
    expect(got.map((r) => r.rows[0]?.v)).toEqual(Array.from({ length: 40 }, (_, i) => i * 7));
    expect(calls).toEqual({ execute: 0, batch: 1 });
    const mixed = await Promise.allSettled([
      c.execute("select v from kv where k = 'k1'"),
      c.execute("select v from no_such_table"),
    ]);
    expect(mixed[0]).toMatchObject({ status: "fulfilled", value: { rows: [{ v: 7 }] } });
    expect(mixed[1]).toMatchObject({ status: "rejected", reason: { message: expect.stringMatching(/no_such_table/) } });
    c.close();
  });

it("serve's database handle on a server, its reads batched, answers drizzle's reads: a hundred at once, each its own row", async () => {
  const opened = await openDb(server.url.replace("http:", "ws:"));
  const got = await Promise.all(
    Array.from({ length: 100 }, (_, i) => opened.db.all<{ v: number }>(sql`select v from kv where k = ${`k${i}`}`)),
  );
  expect(got.map((r) => r[0]?.v)).toEqual(Array.from({ length: 100 }, (_, i) => i * 7));
  opened.client.close();
});
