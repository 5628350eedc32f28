// sqld ends a transaction that holds its write lock over 5 s while another connection waits to write: the holder's
// next statement fails with TRANSACTION_TIMEOUT. That is the database being busy (503, the agent retries), not a bug
// of ours (500 "unhandled error", as three instances at 10,000 agents logged it hundreds of times). The writes grouped
// in that transaction behind the one that met it fail alike: none runs on outside a transaction, committing alone.
import { type Client, createClient } from "@libsql/client";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Tx } from "../../api/db/client.js";
import { dbFailure } from "../../api/db/db-errors.js";
import { openDb } from "../../api/db/open.js";
import { startSqld } from "../helpers/instances.js";
import { until } from "../helpers/process.js";

let server: Awaited<ReturnType<typeof startSqld>>;
beforeAll(async () => {
  server = await startSqld();
});
afterAll(async () => {
  await server?.close();
});

/**
 * A write that inserts 1 into `table`, holds the write lock until `other`'s insert of 2 gets it (sqld takes it from
 * this transaction after 5 s), then inserts 3 — or, `then: "stop"`, ends there, leaving the next statement on the
 * ended transaction to the writes grouped after it.
 */
const heldTooLong =
  (other: Client, table: string, then: "insert" | "stop" = "insert") =>
  async (tx: Tx) => {
    await tx.run(sql.raw(`insert into ${table} values (1)`));
    let otherWrote = false;
    const waiting = other.execute(`insert into ${table} values (2)`).then(() => (otherWrote = true));
    await until(async () => otherWrote, 15_000, "the waiting writer to get the lock");
    await waiting;
    if (then === "insert") await tx.run(sql.raw(`insert into ${table} values (3)`));
  };

it("a write whose transaction sqld ended for holding the lock too long fails as the database's, busy", async () => {
  const holder = await openDb(server.url.replace("http:", "ws:"));
  const other = createClient({ url: server.url.replace("http:", "ws:") });
  try {
    await holder.db.run(sql`create table t (n integer)`);
    const held = holder.store.write(heldTooLong(other, "t"));
    const e = await held.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(dbFailure(e)).toMatchObject({
      status: 503,
      kind: "busy",
      cause: expect.stringMatching(/TRANSACTION_TIMEOUT/),
    });
    // nothing of the ended transaction stayed
    expect((await other.execute("select n from t order by n")).rows.map((r) => r.n)).toEqual([2]);
  } finally {
    other.close();
    holder.client.close();
  }
}, 30_000);

it.each(["insert", "stop"] as const)(
  "the writes that shared the ended transaction (the first one: %s after it) fail as busy, and none of them is committed on its own",
  async (then) => {
    const holder = await openDb(server.url.replace("http:", "ws:"));
    const other = createClient({ url: server.url.replace("http:", "ws:") });
    try {
      const table = `u_${then}`;
      await holder.db.run(sql.raw(`create table ${table} (n integer)`));
      // a write holds the queue, so that the two after it are grouped in the next transaction
      let release: (() => void) | undefined;
      const first = holder.store.write(() => new Promise<void>((r) => (release = r)));
      await until(async () => release !== undefined, 5000, "the first write in its transaction");
      const held = holder.store.write(heldTooLong(other, table, then));
      const after = holder.store.write((tx) => tx.run(sql.raw(`insert into ${table} values (4)`)));
      release!();
      await first;
      const failures = await Promise.all(
        [held, after].map((w) =>
          w.then(
            () => undefined,
            (x: unknown) => dbFailure(x),
          ),
        ),
      );
      expect(failures).toEqual([
        expect.objectContaining({ kind: "busy", cause: expect.stringMatching(/TRANSACTION_TIMEOUT/) }),
        expect.objectContaining({ kind: "busy", cause: expect.stringMatching(/TRANSACTION_TIMEOUT/) }),
      ]);
      expect((await other.execute(`select n from ${table} order by n`)).rows.map((r) => r.n)).toEqual([2]);
    } finally {
      other.close();
      holder.client.close();
    }
  },
  30_000,
);
