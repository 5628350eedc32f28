// On a libSQL server over WebSocket, serve's batched reads and the agents' statement writes go on streams kept open
// (@libsql/client's own calls open a stream — a connection in sqld — for each). Real sqld: every caller gets its own
// rows, what fails reaches its caller as the client reports it, a batch commits whole or not at all, and a restarted
// server is reached again.
import { type Client, LibsqlError } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createStore } from "../../api/db/client.js";
import { dbFailure } from "../../api/db/db-errors.js";
import { batchingReads } from "../../api/db/read-batches.js";
import * as schema from "../../api/db/schema.js";
import { serverStreams, wsTarget } from "../../api/db/server-streams.js";
import { countingClient, seedKv, startSqld } from "../helpers/instances.js";
import { start, stop, until } from "../helpers/process.js";

let server: Awaited<ReturnType<typeof startSqld>>;
let ws: string;
beforeAll(async () => {
  server = await startSqld();
  ws = server.url.replace("http:", "ws:");
  await seedKv(server.url);
});
afterAll(async () => {
  // the restart below starts a server of its own
  if (server) await stop(server.sqld);
  await server?.close();
});

const read = (c: Client, k: string) => c.execute({ sql: "select v from kv where k = ?", args: [k] });

it("reads go on the kept streams, each its own rows; one that fails there fails alone, as the client reports it", async () => {
  const { client, calls } = countingClient(ws);
  const c = batchingReads(client, (send) => void setImmediate(send), serverStreams(wsTarget(ws)!));
  // several turns of reads, more than one batch's worth in each
  for (let turn = 0; turn < 3; turn++) {
    const got = await Promise.all(Array.from({ length: 100 }, (_, i) => read(c, `k${i}`)));
    expect(got.map((r) => r.rows[0]?.v)).toEqual(Array.from({ length: 100 }, (_, i) => i * 7));
    expect(got[5]).toMatchObject({ columns: ["v"], rowsAffected: 0 });
  }
  expect(calls).toEqual({ execute: 0, batch: 0 });
  const mixed = await Promise.allSettled([read(c, "k1"), c.execute("select v from no_such_table")]);
  expect(mixed[0]).toMatchObject({ status: "fulfilled", value: { rows: [{ v: 7 }] } });
  expect(mixed[1]).toMatchObject({ status: "rejected", reason: { message: expect.stringMatching(/no_such_table/) } });
  expect((mixed[1] as PromiseRejectedResult).reason).toBeInstanceOf(LibsqlError);
  // only the failed read ran again through the client
  expect(calls).toEqual({ execute: 1, batch: 0 });
  c.close();
});

it("statement writes go on the kept write stream; a call whose statement fails commits nothing, the others commit", async () => {
  const { client, calls } = countingClient(ws);
  const streams = serverStreams(wsTarget(ws)!);
  const store = createStore(drizzle(batchingReads(client, setImmediate, streams), { schema }), {
    serialize: true,
    file: false,
    streams,
  });
  await client.execute("create table beats (id integer primary key, n integer not null)");
  await client.execute("insert into beats (id, n) select value, 0 from json_each('[1,2,3,4]')");
  calls.execute = 0;
  const bump = (id: number) => ({ sql: "update beats set n = n + 1 where id = ?", args: [id] });
  const good = await Promise.all(Array.from({ length: 100 }, (_, i) => store.writeStatements([bump((i % 4) + 1)])));
  expect(good).toEqual(Array.from({ length: 100 }, () => [1]));
  expect(calls).toEqual({ execute: 0, batch: 0 });
  // a batch with one call that breaks a constraint after its first statement changed a row
  const mixed = await Promise.allSettled([
    store.writeStatements([bump(1)]),
    store.writeStatements([bump(2), { sql: "insert into beats (id, n) values (3, 0)", args: [] }]),
    store.writeStatements([bump(4)]),
  ]);
  expect(mixed.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect((mixed[1] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_CONSTRAINT" });
  const rows = await client.execute("select n from beats order by id");
  // 25 each from the hundred; then 1 and 4 once more, and 2 not (its call rolled back whole)
  expect(rows.rows.map((r) => r.n)).toEqual([26, 25, 25, 26]);
  streams.close();
  client.close();
});

it("after the server restarts, reads and writes reach it again: those made while it was down fail as it being down", async () => {
  const { client, calls } = countingClient(ws);
  const streams = serverStreams(wsTarget(ws)!);
  const c = batchingReads(client, setImmediate, streams);
  const store = createStore(drizzle(c, { schema }), { serialize: true, file: false, streams });
  expect((await read(c, "k2")).rows[0]?.v).toBe(14);
  const { spawnfile, spawnargs } = server.sqld.child;
  await stop(server.sqld);
  const down = await read(c, "k2").catch((e: unknown) => e);
  expect(dbFailure(down)).toMatchObject({ status: 503, kind: expect.stringMatching(/^(refused|unreachable|closed)$/) });
  server.sqld = start(spawnfile, spawnargs.slice(1));
  await until(async () => (await fetch(`${server.url}/health`)).ok, 20_000, "sqld again");
  await until(async () => (await read(c, "k3").catch(() => undefined))?.rows[0]?.v === 21, 10_000, "a read again");
  await until(
    async () =>
      (
        await store.writeStatements([{ sql: "update kv set v = v where k = ?", args: ["k3"] }]).catch(() => undefined)
      )?.[0] === 1,
    10_000,
    "a write again",
  );
  // on streams opened anew, not through the client
  calls.execute = 0;
  calls.batch = 0;
  await Promise.all(Array.from({ length: 10 }, (_, i) => read(c, `k${i}`)));
  await store.writeStatements([{ sql: "update kv set v = v where k = ?", args: ["k3"] }]);
  expect(calls).toEqual({ execute: 0, batch: 0 });
  c.close();
});
