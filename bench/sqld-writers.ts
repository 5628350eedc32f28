// Whether a libSQL server (sqld) keeps writing while several connections take turns at its write lock — what several
// `llmgw serve` on one sqld do. W writers, each on a connection of its own, write one small row at a time in a loop
// (a write batch: BEGIN IMMEDIATE, UPDATE, COMMIT in one request; or an interactive transaction: two reads and an
// update, a round trip each) for S seconds, on a table of 10,000 rows of 8 KB. It prints the commits of each second,
// sqld's CPU, and last one line: `sqld-writers: wal=… writers=W kind=… commits_per_s=X stalled_after_s=Y|none`. A
// stall is a run of seconds without a commit that lasts to its end: sqld 0.24.32 with its default WAL can stop every
// write for good (spinning its threads in its write-lock hand-off) once several connections wait for that lock — six
// with interactive transactions stop within seconds, three now and then; with `--use-custom-wal libsql-wal` it did
// not in any run here (docs/deploy.md).
// Run: npx tsx bench/sqld-writers.ts [--writers 6] [--seconds 30] [--wal default|libsql-wal] [--kind transaction|batch]
import { parseArgs } from "node:util";
import { type Client, createClient } from "@libsql/client";
import { startSqld } from "../test/helpers/instances.js";
import { procStat } from "./fleet-servers.js";
import { machine } from "./machine.js";

const ROWS = 10_000;
const ROW_BYTES = 8_000;

function options() {
  const { values: v } = parseArgs({
    options: {
      writers: { type: "string", default: "6" },
      seconds: { type: "string", default: "30" },
      wal: { type: "string", default: "default" },
      kind: { type: "string", default: "transaction" },
    },
  });
  const writers = Number(v.writers);
  const seconds = Number(v.seconds);
  if (!Number.isInteger(writers) || writers < 1) throw new Error("--writers wants a whole number from 1 up");
  if (!Number.isInteger(seconds) || seconds < 1) throw new Error("--seconds wants a whole number from 1 up");
  if (v.wal !== "default" && v.wal !== "libsql-wal") throw new Error("--wal is default or libsql-wal");
  if (v.kind !== "batch" && v.kind !== "transaction") throw new Error("--kind is batch or transaction");
  return { writers, seconds, wal: v.wal, kind: v.kind };
}

let o: ReturnType<typeof options>;
try {
  o = options();
} catch (e) {
  console.error(`bench/sqld-writers.ts: ${(e as Error).message}`);
  process.exit(2);
}
console.log(`machine: ${machine()}`);
const server = await startSqld({
  migrate: false,
  args: o.wal === "libsql-wal" ? ["--use-custom-wal", "libsql-wal"] : [],
});
const { sqld } = server;
const url = server.url.replace("http:", "ws:");
const clients: Client[] = [];
try {
  const setup = createClient({ url });
  clients.push(setup);
  await setup.execute("create table n (id integer primary key, body text, seen integer)");
  const body = "x".repeat(ROW_BYTES);
  for (let first = 0; first < ROWS; first += 1000)
    await setup.batch(
      Array.from({ length: 1000 }, (_, i) => ({ sql: "insert into n values (?, ?, 0)", args: [first + i, body] })),
      "write",
    );

  const pick = () => Math.floor(Math.random() * ROWS);
  const writeOnce = async (c: Client) => {
    if (o.kind === "batch") {
      await c.batch([{ sql: "update n set seen = ? where id = ?", args: [Date.now(), pick()] }], "write");
      return;
    }
    const tx = await c.transaction("write");
    try {
      const id = pick();
      await tx.execute({ sql: "select seen from n where id = ?", args: [id] });
      await tx.execute({ sql: "select length(body) from n where id = ?", args: [id] });
      await tx.execute({ sql: "update n set seen = ? where id = ?", args: [Date.now(), id] });
      await tx.commit();
    } finally {
      tx.close();
    }
  };
  let commits = 0;
  const failures = new Map<string, number>();
  const end = Date.now() + o.seconds * 1000;
  const writer = async (c: Client) => {
    while (Date.now() < end) {
      try {
        await writeOnce(c);
        commits++;
      } catch (e) {
        const why = (e as { code?: string }).code ?? String(e);
        failures.set(why, (failures.get(why) ?? 0) + 1);
      }
    }
  };
  const perSecond: number[] = [];
  let counted = 0;
  const tick = setInterval(() => {
    perSecond.push(commits - counted);
    counted = commits;
  }, 1000);
  const cpu0 = procStat(sqld.child.pid!).cpuMs;
  const t0 = Date.now();
  // a writer stuck in the server never returns: the run ends at its deadline whatever the writers do
  const writers = Array.from({ length: o.writers }, () => createClient({ url }));
  clients.push(...writers);
  await Promise.race([Promise.all(writers.map(writer)), new Promise((ok) => setTimeout(ok, o.seconds * 1000 + 2000))]);
  clearInterval(tick);
  const wall = (Date.now() - t0) / 1000;
  const cpu = (procStat(sqld.child.pid!).cpuMs - cpu0) / 1000 / wall;
  const lastCommit = perSecond.findLastIndex((n) => n > 0);
  const stalled = lastCommit < perSecond.length - 3 ? lastCommit + 1 : undefined;
  console.log(
    `sqld ${o.wal === "default" ? "(its default WAL)" : "--use-custom-wal libsql-wal"}, ${o.writers} writers, ` +
      `${o.kind === "batch" ? "one-statement write batches" : "interactive transactions (3 round trips)"}, ${o.seconds} s`,
  );
  console.log(`commits per second: ${perSecond.join(" ")}`);
  console.log(
    `sqld CPU ${(100 * cpu).toFixed(0)}% of a core; failed writes: ${JSON.stringify(Object.fromEntries(failures))}`,
  );
  console.log(
    `sqld-writers: wal=${o.wal} writers=${o.writers} kind=${o.kind} commits_per_s=${Math.round(commits / wall)} ` +
      `stalled_after_s=${stalled ?? "none"}`,
  );
} finally {
  // a server stuck in its lock hand-off may not stop when asked
  sqld.child.kill("SIGKILL");
  await server.close().catch(() => undefined);
  for (const c of clients) c.close();
}
process.exit(0);
