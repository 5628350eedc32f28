// serve's writes on a libSQL server take turns as on a file: a write that arrives while one runs waits and commits in
// the next transaction, with those queued beside it (an open transaction holds one of sqld's connections, each a
// thread: a fleet's heartbeats, each its own transaction at once, took sqld past its 4,096 threads and it aborted).
import { createClient } from "@libsql/client";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/libsql";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createStore } from "../../api/db/client.js";
import { openDb } from "../../api/db/open.js";
import { serverStreams, wsTarget } from "../../api/db/server-streams.js";
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

it("a statement write waits for the instance's running transaction: one connection of an instance writes at a time", async () => {
  // sqld 0.24's default WAL can stop all writing for good once several connections wait for its lock together: an
  // instance's transaction and its statement batches must not both wait there
  const url = server.url.replace("http:", "ws:");
  const streams = serverStreams(wsTarget(url)!);
  const order: string[] = [];
  const spied = {
    ...streams,
    write(stmts: Parameters<typeof streams.write>[0]) {
      order.push("batch sent");
      return streams.write(stmts);
    },
  };
  const client = createClient({ url });
  const store = createStore(drizzle(client), { serialize: true, file: false, streams: spied });
  try {
    await store.writeStatements([{ sql: "insert into seen values (?)", args: [10] }]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const running = store.write(async (tx) => {
      await tx.run(sql`insert into seen values (11)`);
      order.push("transaction open");
      await held;
    });
    await until(async () => order.includes("transaction open"), 5000, "the transaction to open");
    const batch = store.writeStatements([{ sql: "insert into seen values (?)", args: [12] }]);
    // round trips on another connection, made after the batch was asked for: had it been sent, it was by now
    for (let i = 0; i < 3; i++) await client.execute("select 1");
    order.push("released");
    release();
    await running;
    expect(await batch).toEqual([1]);
    expect(order).toEqual(["batch sent", "transaction open", "released", "batch sent"]);
    // and a transaction asked for while a batch is on its way runs once the batch is done (nothing is left waiting)
    const both = await Promise.all([
      store.writeStatements([{ sql: "insert into seen values (?)", args: [13] }]),
      store.write(async (tx) => (await tx.all<{ n: number }>(sql`select max(n) as n from seen`))[0]!.n),
    ]);
    expect(both).toEqual([[1], 13]);
  } finally {
    streams.close();
    client.close();
  }
});
