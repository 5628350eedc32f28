// serve's fleet thread (the built dist/fleet-thread.js, as `llmgw serve` starts it): placement runs on it, each of its
// write transactions in the instance's write turn, so that no write of the serving thread runs meanwhile; its log
// lines reach the serving thread's log; the cluster gauges it reads are those read on the serving thread; and once it
// has ended its work comes back to the serving thread.

import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Store } from "../../api/db/client.js";
import { replicas } from "../../api/db/schema.js";
import { MAX_WAITING, queueFull } from "../../api/db/write-limits.js";
import { type FleetThread, keepFleetThread, startFleetThread } from "../../api/fleet-thread/host.js";
import type { Log } from "../../api/log.js";
import { scrapeCluster } from "../../api/metrics/cluster-figures.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { capacityFrom } from "../../api/views/capacity.js";
import {
  createTestApp,
  declareOneGpuDeployment,
  defaultSettings,
  FLEET_THREAD,
  migratedDb,
  silentLog,
  type TestApp,
} from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";
import { until } from "../helpers/process.js";

let t: TestApp | undefined;
afterEach(() => t?.close());

/** The lines logged, and a store that counts the turns taken and the writes that ran inside one. */
function watched() {
  const lines: string[] = [];
  const afterMs: number[] = [];
  const line = (m: string, extra?: object) => {
    lines.push(m);
    const after = (extra as { afterMs?: number } | undefined)?.afterMs;
    if (after !== undefined) afterMs.push(after);
  };
  const seen = { turns: 0, inTurn: false, writesInTurn: 0 };
  const wrapStore = (s: Store): Store => ({
    ...s,
    turn: (fn) =>
      s.turn!(async () => {
        seen.turns++;
        seen.inTurn = true;
        try {
          return await fn();
        } finally {
          seen.inTurn = false;
        }
      }),
    write: (fn) =>
      s.write((tx) => {
        if (seen.inTurn) seen.writesInTurn++;
        return fn(tx);
      }),
  });
  return { lines, afterMs, seen, wrapStore, log: { info: line, warn: line, error: line } };
}

const placed = async (app: TestApp) => (await app.db.select({ id: replicas.id }).from(replicas)).length;

async function registerNodes(app: TestApp, ids: string[]): Promise<void> {
  for (const id of ids) {
    const r = await app.call("POST", "/api/v1/agents/register", {
      token: app.adminToken,
      body: { ...registerBody(id, nodeInventory(id)), labels: { pool: "p" } },
    });
    expect(r.status).toBe(201);
  }
}

it("places on the fleet thread, its writes in the instance's turns with no write of this thread between", async () => {
  const w = watched();
  t = await createTestApp({ fleetThread: true, log: w.log, wrapStore: w.wrapStore });
  const app = t;
  await registerNodes(app, ["n1", "n2"]);
  // writes of this thread go on while the thread places: each waits for the turn to end
  const cordons = ["n1", "n2", "n1"].map((id) => app.admin("POST", `/api/v1/nodes/${id}/uncordon`));
  await declareOneGpuDeployment(app, 3);
  await Promise.all(cordons);
  expect(await placed(app)).toBe(3);
  expect(w.seen.turns).toBeGreaterThan(0);
  expect(w.seen.writesInTurn).toBe(0);
  // the thread's own log lines (its read of the fleet) and the decisions the serving thread logs from its answers
  expect(w.lines.some((l) => /^read \d+ nodes for placement in \d+ ms$/.test(l))).toBe(true);
  expect(w.lines.filter((l) => l.startsWith("placed replica "))).toHaveLength(3);
});

it("reads the cluster gauges as the serving thread reads them", async () => {
  t = await createTestApp({ fleetThread: true });
  await registerNodes(t, ["n1"]);
  await declareOneGpuDeployment(t, 2);
  const now = t.clock.now();
  const there = await t.thread!.scrape(now);
  expect(there?.databaseUp).toBe(true);
  expect(there).toEqual(await scrapeCluster(t.db, now, 180, newPlacementCache(), new Map()));
});

it("reads the fleet's capacity as the serving thread reads it, for GET /api/v1/plan", async () => {
  t = await createTestApp({ fleetThread: true });
  await registerNodes(t, ["n1", "n2"]);
  await declareOneGpuDeployment(t, 3);
  const now = t.clock.now();
  const there = await t.thread!.capacity(now);
  expect(there).toEqual(await capacityFrom(t.db, newPlacementCache(), now, 180));
  expect(there?.classes.find((c) => c.class === "h100-80g")).toMatchObject({ total: 16, used: 3 });
  const asked = vi.spyOn(t.thread!, "capacity");
  const plan = await t.admin("GET", "/api/v1/plan");
  expect(plan.status).toBe(200);
  expect(plan.json).toEqual(there);
  expect(asked).toHaveBeenCalledOnce();
});

it("once the thread has ended, placement runs on the serving thread", async () => {
  t = await createTestApp({ fleetThread: true });
  await registerNodes(t, ["n1"]);
  await declareOneGpuDeployment(t, 1);
  expect(await placed(t)).toBe(1);
  await t.thread!.close();
  expect(t.thread!.place(t.clock.now())).toBeUndefined();
  await declareOneGpuDeployment(t, 3);
  expect(await placed(t)).toBe(3);
});

it("makes the instance unready while its writes fail for the storage's sake, as the serving thread's do", async () => {
  // a stand-in for the thread at the protocol's edge: it takes a turn and says its write failed as on a full disk
  const dir = mkdtempSync(join(tmpdir(), "llmgw-thread-"));
  const file = join(dir, "full-disk-thread.mjs");
  writeFileSync(
    file,
    `import { parentPort } from "node:worker_threads";
parentPort.on("message", (m) => {
  if (m.kind === "granted")
    parentPort.postMessage({ kind: "turn-over", turn: m.turn, writeFailure: { cause: "database or disk is full (SQLITE_FULL)", at: Date.now() } });
  else if (m.kind === "stop") parentPort.close();
});
parentPort.postMessage({ kind: "turn", turn: 1 });
`,
  );
  t = await createTestApp();
  const app = t;
  expect((await app.call("GET", "/readyz")).status).toBe(200);
  const thread = startFleetThread(
    file,
    { dbUrl: app.url, dbSync: "normal", settings: defaultSettings() },
    { store: app.store, log: silentLog, onEvents: () => {} },
  );
  try {
    await until(async () => app.store.writeFailure?.() !== undefined, 10_000, "the thread's failure noted");
    const ready = await app.call("GET", "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.json.detail).toMatch(/^database refuses writes: database or disk is full \(SQLITE_FULL\) \(last at /);
  } finally {
    await thread.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it("answers a poll whose placement the instance's full write queue refused on the thread 503, as on this thread", async () => {
  let refuse = false;
  t = await createTestApp({
    fleetThread: true,
    wrapStore: (s) => ({ ...s, turn: (fn) => (refuse ? Promise.reject(queueFull(MAX_WAITING)) : s.turn!(fn)) }),
  });
  const app = t;
  const r = await app.call("POST", "/api/v1/agents/register", {
    token: app.adminToken,
    body: { ...registerBody("n1", nodeInventory("n1")), labels: { pool: "p" } },
  });
  expect(r.status).toBe(201);
  refuse = true;
  await declareOneGpuDeployment(app, 1);
  const poll = await app.call("GET", "/api/v1/agents/n1/assignments", { token: r.json.nodeToken });
  // the agent backs off and polls again, rather than taking the control plane's failure for a bug
  expect(poll.status, poll.text).toBe(503);
  expect(poll.headers.get("retry-after")).toBeTruthy();
  expect(poll.json.detail).toContain(`already holds ${MAX_WAITING} writes waiting`);
  refuse = false;
  expect((await app.call("GET", "/api/v1/agents/n1/assignments", { token: r.json.nodeToken })).status).toBe(200);
  expect(await placed(app)).toBe(1);
});

it("copies a file database's write-ahead log into the file, where the serving thread's commits would not yet", async () => {
  const m = await migratedDb();
  const file = m.url.slice("file:".length);
  try {
    await m.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const before = statSync(file).size;
    // ~100 pages of new rows: far under the 1,000 at which SQLite copies the log at a commit
    await m.client.execute("CREATE TABLE filler (b BLOB)");
    await m.client.batch(
      Array.from({ length: 100 }, () => "INSERT INTO filler VALUES (randomblob(4000))"),
      "write",
    );
    expect(statSync(file).size).toBe(before);
    const thread = startFleetThread(
      FLEET_THREAD,
      { dbUrl: m.url, dbSync: "normal", settings: defaultSettings() },
      { store: m.store, log: silentLog, onEvents: () => {} },
    );
    try {
      await until(async () => statSync(file).size > before + 300_000, 10_000, "the log copied into the file");
    } finally {
      await thread.close();
    }
  } finally {
    m.close();
  }
});

describe("a fleet thread that ends on its own", () => {
  /** A thread whose database cannot be opened (its directory cannot be made): it ends as it starts. */
  const broken = (m: { store: Store }, log: Log, onEnd: (why: string) => void) =>
    startFleetThread(
      FLEET_THREAD,
      { dbUrl: "file:/dev/null/llmgw/db.sqlite", dbSync: "normal", settings: defaultSettings() },
      { store: m.store, log, onEvents: () => {}, onEnd },
    );

  it("says why in the log, and its work comes back to the serving thread", async () => {
    const m = await migratedDb();
    try {
      const w = watched();
      let thread!: FleetThread;
      const why = await new Promise<string>((ended) => {
        thread = broken(m, w.log, ended);
      });
      expect(why).toMatch(/ENOTDIR/);
      expect(w.lines.find((l) => l.startsWith("the fleet thread ended ("))).toMatch(/run on the serving thread$/);
      expect(thread.place(Date.now())).toBeUndefined();
      expect(thread.capacity(Date.now())).toBeUndefined();
    } finally {
      m.close();
    }
  });

  it("is started again, later each time it ends again soon, until the instance stops", async () => {
    const m = await migratedDb();
    const stop = new AbortController();
    try {
      const w = watched();
      let starts = 0;
      const kept = keepFleetThread(
        (onEnd) => {
          starts++;
          return broken(m, w.log, onEnd);
        },
        { log: w.log, stop: stop.signal, againMs: 20 },
      );
      await until(async () => w.afterMs.length >= 3, 20_000, "the thread ended three times");
      expect(starts).toBeGreaterThanOrEqual(3);
      expect(w.lines.filter((l) => l.startsWith("starting the fleet thread again in")).length).toBe(w.afterMs.length);
      expect(w.afterMs.slice(0, 3)).toEqual([20, 40, 80]);
      stop.abort();
      const after = starts;
      await new Promise((r) => setTimeout(r, 300));
      expect(starts).toBe(after);
      await kept.close();
    } finally {
      stop.abort();
      m.close();
    }
  });
});
