// serve's writes on a libSQL server take turns as on a file: a write that arrives while one runs waits and commits in
// the next transaction, with those queued beside it (an open transaction holds one of sqld's connections, each a
// thread: a fleet's heartbeats, each its own transaction at once, took sqld past its 4,096 threads and it aborted).
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDb } from "../../api/node.js";
import { startSqld } from "../helpers/instances.js";
import { until } from "../helpers/process.js";

let server: Awaited<ReturnType<typeof startSqld>>;
let opened: Awaited<ReturnType<typeof openDb>>;
beforeAll(async () => {
  server = await startSqld();
  opened = await openDb(server.url.replace("http:", "ws:"));
  await opened.db.run(sql`create table seen (n integer)`);
});
afterAll(async () => {
  opened?.client.close();
  await server?.close();
});

it("a write waits for the one running; those queued behind it share the next transaction", async () => {
  const order: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = opened.store.write(async (tx) => {
    await tx.run(sql`insert into seen values (1)`);
    order.push("first ran");
    await held;
  });
  await until(async () => order.includes("first ran"), 5000, "the first write in its transaction");
  const later = [2, 3].map((n) =>
    opened.store.write(async (tx) => {
      order.push(`${n} ran`);
      return (await tx.all<{ tx: number }>(sql`select count(*) as tx from seen`))[0]!.tx;
    }),
  );
  // two round trips on the same connection, sent after the later writes asked for theirs: had those begun, they ran
  for (let i = 0; i < 2; i++) await opened.db.run(sql`select 1`);
  order.push("released");
  release();
  await first;
  // each later write sees the first committed; the two ran in one transaction, one after the other
  expect(await Promise.all(later)).toEqual([1, 1]);
  expect(order).toEqual(["first ran", "released", "2 ran", "3 ran"]);
});

it("statement writes sent at once commit in shared batches, each call told the rows its statements changed", async () => {
  await opened.db.run(sql`create table beats (id integer primary key, n integer not null)`);
  await opened.db.run(sql`insert into beats (id, n) select value, 0 from json_each('[1,2,3,4,5,6,7,8]')`);
  const bump = (id: number) => ({ sql: "update beats set n = n + 1 where id = ?", args: [id] });
  const calls = Array.from({ length: 200 }, (_, i) => opened.store.writeStatements([bump((i % 8) + 1), bump(99)]));
  expect(await Promise.all(calls)).toEqual(Array.from({ length: 200 }, () => [1, 0]));
  const rows = await opened.db.all<{ n: number }>(sql`select n from beats order by id`);
  expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 8 }, () => 25));
});
