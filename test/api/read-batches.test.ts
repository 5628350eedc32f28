import type { Client, InStatement, ResultSet } from "@libsql/client";
import { expect, it } from "vitest";
import { batchingReads, MAX_READ_BATCH } from "../../api/db/read-batches.js";

const argOf = (s: InStatement) => (typeof s === "string" ? s : String((s.args as unknown[])?.[0]));
const rs = (v: string) => ({ rows: [{ v }] }) as unknown as ResultSet;

/** A client that answers each statement with its first argument and records how it was asked. */
function fakeClient(o: { failBatch?: boolean; failArg?: string } = {}) {
  const calls: { kind: "execute" | "batch"; stmts: string[]; mode?: string }[] = [];
  const answer = (s: InStatement) => {
    if (o.failArg && argOf(s) === o.failArg) throw new Error(`no such row ${o.failArg}`);
    return rs(argOf(s));
  };
  const client = {
    closed: false,
    async execute(s: InStatement) {
      calls.push({ kind: "execute", stmts: [argOf(s)] });
      return answer(s);
    },
    async batch(stmts: InStatement[], mode?: string) {
      calls.push({ kind: "batch", stmts: stmts.map(argOf), mode });
      if (o.failBatch || stmts.some((s) => o.failArg && argOf(s) === o.failArg)) throw new Error("batch failed");
      return stmts.map(answer);
    },
    close() {
      client.closed = true;
    },
  };
  return { client: client as unknown as Client, calls };
}

const select = (v: string) => ({ sql: "SELECT v FROM t WHERE v = ?", args: [v] });
const immediate = (send: () => void) => void setImmediate(send);

it("sends the reads asked for in one turn as one read-only batch, each caller getting its own rows", async () => {
  const { client, calls } = fakeClient();
  const c = batchingReads(client, immediate);
  const got = await Promise.all(["a", "b", "c"].map((v) => c.execute(select(v))));
  expect(got.map((r) => r.rows[0]!.v)).toEqual(["a", "b", "c"]);
  expect(calls).toEqual([{ kind: "batch", stmts: ["a", "b", "c"], mode: "read" }]);
  // a read alone goes as it is: a batch of one costs a transaction around it
  await c.execute(select("d"));
  expect(calls.at(-1)).toEqual({ kind: "execute", stmts: ["d"] });
});

it("sends at most MAX_READ_BATCH reads in a batch, the rest in the next", async () => {
  const { client, calls } = fakeClient();
  const c = batchingReads(client, immediate);
  const n = MAX_READ_BATCH + 5;
  const got = await Promise.all(Array.from({ length: n }, (_, i) => c.execute(select(`r${i}`))));
  expect(got.map((r) => r.rows[0]!.v)).toEqual(Array.from({ length: n }, (_, i) => `r${i}`));
  expect(calls.map((x) => x.stmts.length)).toEqual([MAX_READ_BATCH, 5]);
});

it("runs the reads of a failed batch one by one: only the failing one's caller gets an error", async () => {
  const { client, calls } = fakeClient({ failArg: "bad" });
  const c = batchingReads(client, immediate);
  const got = await Promise.allSettled(["a", "bad", "c"].map((v) => c.execute(select(v))));
  expect(got.map((r) => (r.status === "fulfilled" ? r.value.rows[0]!.v : String(r.reason)))).toEqual([
    "a",
    "Error: no such row bad",
    "c",
  ]);
  expect(calls.map((x) => x.kind)).toEqual(["batch", "execute", "execute", "execute"]);
});

it("leaves writes, SQL given as text with its arguments, and everything else to the client", async () => {
  const { client, calls } = fakeClient();
  const c = batchingReads(client, immediate);
  await Promise.all([
    c.execute({ sql: "UPDATE t SET v = ?", args: ["w"] }),
    c.execute("select v from t where v = ?", ["x"]),
    c.execute("  SELECT 1"),
  ]);
  expect(calls[0]).toEqual({ kind: "execute", stmts: ["w"] });
  expect(calls[1]).toEqual({ kind: "batch", stmts: ["x", "  SELECT 1"], mode: "read" });
  c.close();
  expect(client.closed).toBe(true);
});
