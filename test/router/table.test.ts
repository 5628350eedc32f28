import { afterEach, describe, expect, it, vi } from "vitest";
import { openDb } from "../../api/db/open.js";
import { deployments, models, nodes, shardStatus, shards } from "../../api/db/schema.js";
import type { Log } from "../../api/log.js";
import { applyMigrations } from "../../api/node.js";
import { buildTable, createIsolateTableCache, createTableCache, readTable } from "../../api/router/table.js";
import type { Endpoint, EndpointTable } from "../../api/router/types.js";
import { tempDbUrl } from "../helpers/db.js";

type Row = Parameters<typeof buildTable>[0][number];
const spec = (o: { model?: string; deployment?: string; leaderAddr?: string; httpPort?: number }) =>
  JSON.stringify({
    model: o.model ?? "m",
    deployment: o.deployment ?? "d",
    leaderAddr: o.leaderAddr ?? "10.0.0.1",
    httpPort: o.httpPort ?? 8000,
  });
const row = (replicaId: string, rank: number, state: string | null, o: Parameters<typeof spec>[0] = {}): Row => ({
  replicaId,
  rank,
  state,
  spec: spec(o),
});
const end = (replicaId: string, url: string, model = "m", deployment = "d"): Endpoint => ({
  replicaId,
  deployment,
  model,
  url,
});
const NONE = "no replica is ready yet";

describe("buildTable", () => {
  it.each<{ name: string; rows: Row[]; want: Record<string, Endpoint[]> }>([
    {
      name: "a one-shard ready replica",
      rows: [row("r1", 0, "ready")],
      want: { m: [end("r1", "http://10.0.0.1:8000")] },
    },
    { name: "a replica not ready yet", rows: [row("r1", 0, "loading")], want: {} },
    { name: "a shard without reported state", rows: [row("r1", 0, null)], want: {} },
    {
      name: "a multi-node replica ready only when every shard is",
      rows: [
        row("r1", 0, "ready", { leaderAddr: "10.0.0.1" }),
        row("r1", 1, "ready", { leaderAddr: "10.0.0.1" }),
        row("r2", 0, "ready", { leaderAddr: "10.0.0.3" }),
        row("r2", 1, "starting", { leaderAddr: "10.0.0.3" }),
      ],
      want: { m: [end("r1", "http://10.0.0.1:8000")] },
    },
    {
      name: "a failed follower keeps the replica out",
      rows: [row("r1", 1, "failed"), row("r1", 0, "ready")],
      want: {},
    },
    { name: "no rank 0 among the shards: not ready", rows: [row("r1", 1, "ready"), row("r1", 2, "ready")], want: {} },
    {
      name: "rank 0's leaderAddr and httpPort make the url, whichever row comes first",
      rows: [
        row("r1", 1, "ready", { leaderAddr: "10.9.9.9", httpPort: 1 }),
        row("r1", 0, "ready", { leaderAddr: "10.0.0.7", httpPort: 30001 }),
      ],
      want: { m: [end("r1", "http://10.0.0.7:30001")] },
    },
    {
      name: "an IPv6 leader address goes in brackets",
      rows: [row("r1", 0, "ready", { leaderAddr: "fd00::1", httpPort: 9000 })],
      want: { m: [end("r1", "http://[fd00::1]:9000")] },
    },
    {
      name: "a host name as is",
      rows: [row("r1", 0, "ready", { leaderAddr: "gpu-7.example", httpPort: 9000 })],
      want: { m: [end("r1", "http://gpu-7.example:9000")] },
    },
    {
      name: "endpoints sorted by replica id",
      rows: [
        row("r3", 0, "ready", { httpPort: 3 }),
        row("r1", 0, "ready", { httpPort: 1 }),
        row("r2", 0, "ready", { httpPort: 2 }),
      ],
      want: { m: [end("r1", "http://10.0.0.1:1"), end("r2", "http://10.0.0.1:2"), end("r3", "http://10.0.0.1:3")] },
    },
    {
      name: "grouped by served model, deployment kept",
      rows: [
        row("r1", 0, "ready", { model: "a", deployment: "da" }),
        row("r2", 0, "ready", { model: "b", deployment: "db1", httpPort: 2 }),
        row("r3", 0, "ready", { model: "b", deployment: "db2", httpPort: 3 }),
      ],
      want: {
        a: [end("r1", "http://10.0.0.1:8000", "a", "da")],
        b: [end("r2", "http://10.0.0.1:2", "b", "db1"), end("r3", "http://10.0.0.1:3", "b", "db2")],
      },
    },
  ])("ready: $name", ({ rows, want }) => {
    const t = buildTable(rows, [], 123);
    expect(Object.fromEntries(t.ready)).toEqual(want);
    expect(t.readAt).toBe(123);
  });

  it.each<{ name: string; declared: { served: string; pending: string | undefined }[]; want: string }>([
    {
      name: "its pending reason",
      declared: [{ served: "m", pending: "no node has 8 free h100-80g" }],
      want: "no node has 8 free h100-80g",
    },
    { name: "a default without one", declared: [{ served: "m", pending: undefined }], want: NONE },
    {
      name: "a missing model resource",
      declared: [{ served: "ghost", pending: "model ghost does not exist" }],
      want: "model ghost does not exist",
    },
    {
      name: "a reason over a deployment without one",
      declared: [
        { served: "m", pending: undefined },
        { served: "m", pending: "why" },
      ],
      want: "why",
    },
    {
      name: "a reason not overwritten by a deployment without one",
      declared: [
        { served: "m", pending: "why" },
        { served: "m", pending: undefined },
      ],
      want: "why",
    },
    {
      name: "the first of several reasons",
      declared: [
        { served: "m", pending: undefined },
        { served: "m", pending: "first" },
        { served: "m", pending: "second" },
      ],
      want: "first",
    },
  ])("a declared model with no ready replica gets $name", ({ declared, want }) => {
    const t = buildTable([row("r1", 0, "starting")], declared, 0);
    expect(t.ready.size).toBe(0);
    expect(t.declared.get(declared[0]!.served)).toBe(want);
  });

  it("declares every served model with a deployment or a ready replica, and no other", () => {
    const t = buildTable(
      [row("r1", 0, "ready", { model: "served-only" })],
      [
        { served: "a", pending: undefined },
        { served: "b", pending: "x" },
      ],
      0,
    );
    expect([...t.declared.keys()].sort()).toEqual(["a", "b", "served-only"]);
    expect(t.declared.get("served-only")).toBe("");
    expect(t.declared.has("nope")).toBe(false);
  });
});

describe("readTable", () => {
  it("joins shards with their state and names missing models", async () => {
    const tmp = tempDbUrl();
    const { client, db } = await openDb(tmp.url);
    try {
      await applyMigrations(db);
      const at = 1_700_000_000_000;
      await db.insert(nodes).values(
        ["n1", "n2"].map((id, i) => ({
          id,
          hostname: id,
          mgmtAddr: `10.0.0.${i + 1}`,
          pool: "prod",
          labels: {},
          agentVersion: "test",
          tokenHash: `hash-${id}`,
          inventory: "{}",
          registeredAt: at,
          lastSeenAt: at,
        })),
      );
      await db.insert(models).values([
        {
          name: "llama",
          spec: JSON.stringify({ servedName: "meta/llama", weightsPath: "/w" }),
          version: 1,
          createdAt: at,
          updatedAt: at,
        },
        {
          name: "qwen",
          spec: JSON.stringify({ weightsPath: "/w", prefixRouting: { queueFactor: 2.5 } }),
          version: 1,
          createdAt: at,
          updatedAt: at,
        },
      ]);
      await db.insert(deployments).values([
        { name: "llama-prod", model: "llama", spec: "{}", version: 1, createdAt: at, updatedAt: at },
        {
          name: "qwen-prod",
          model: "qwen",
          spec: "{}",
          version: 1,
          createdAt: at,
          updatedAt: at,
          pending: [
            { count: 1, reason: "no free gpu" },
            { count: 1, reason: "pool empty" },
          ],
        },
        { name: "orphan", model: "ghost", spec: "{}", version: 1, createdAt: at, updatedAt: at },
      ]);
      const shard = (id: string, replicaId: string, nodeId: string, rank: number, leaderAddr: string) => ({
        id,
        replicaId,
        nodeId,
        rank,
        spec: spec({ model: "meta/llama", deployment: "llama-prod", leaderAddr, httpPort: 8100 }),
      });
      // r1: two nodes, both ready; r2: follower still loading; r3: no status reported at all
      await db
        .insert(shards)
        .values([
          shard("r1-s0", "r1", "n1", 0, "10.0.0.1"),
          shard("r1-s1", "r1", "n2", 1, "10.0.0.1"),
          shard("r2-s0", "r2", "n2", 0, "10.0.0.2"),
          shard("r2-s1", "r2", "n1", 1, "10.0.0.2"),
          shard("r3-s0", "r3", "n1", 0, "10.0.0.1"),
        ]);
      await db.insert(shardStatus).values([
        { nodeId: "n1", shardId: "r1-s0", replicaId: "r1", state: "ready", updatedAt: at },
        { nodeId: "n2", shardId: "r1-s1", replicaId: "r1", state: "ready", updatedAt: at },
        { nodeId: "n2", shardId: "r2-s0", replicaId: "r2", state: "ready", updatedAt: at },
        { nodeId: "n1", shardId: "r2-s1", replicaId: "r2", state: "loading", updatedAt: at },
        // a status for r3's shard id, but reported by another node: does not count
        { nodeId: "n2", shardId: "r3-s0", replicaId: "r3", state: "ready", updatedAt: at },
      ]);
      const t = await readTable(db, 42);
      expect(t.readAt).toBe(42);
      expect(Object.fromEntries(t.ready)).toEqual({
        "meta/llama": [end("r1", "http://10.0.0.1:8100", "meta/llama", "llama-prod")],
      });
      expect(Object.fromEntries(t.declared)).toEqual({
        "meta/llama": NONE,
        qwen: "no free gpu; pool empty",
        ghost: "model ghost does not exist",
      });
      // each served model's routing, the spec's knobs over the defaults
      expect(t.routing?.get("qwen")).toMatchObject({ policy: "prefix", slack: 0, queueFactor: 2.5 });
      expect(t.routing?.get("meta/llama")).toMatchObject({ policy: "prefix", queueFactor: 4 });
    } finally {
      client.close();
      tmp.cleanup();
    }
  });
});

describe("createTableCache", () => {
  const T0 = 1_000_000;
  const table = (readAt: number, tag = String(readAt)): EndpointTable => ({
    ready: new Map([[tag, []]]),
    declared: new Map(),
    readAt,
  });

  /** A clock, a log that keeps what it was told, and a `read` whose results the test hands out. */
  function setup() {
    let t = T0;
    const lines: { level: string; msg: string }[] = [];
    const log: Log = {
      info: (msg) => lines.push({ level: "info", msg }),
      warn: (msg) => lines.push({ level: "warn", msg }),
      error: (msg) => lines.push({ level: "error", msg }),
    };
    const waiting: { ok: (t: EndpointTable) => void; fail: (e: unknown) => void }[] = [];
    const read = vi.fn(() => new Promise<EndpointTable>((ok, fail) => waiting.push({ ok, fail })));
    const next = () => {
      const w = waiting.shift();
      if (!w) throw new Error("no read in flight");
      return w;
    };
    return {
      now: () => t,
      advance: (ms: number) => (t += ms),
      log,
      lines,
      read,
      /** Completes the oldest read in flight with a table read now. */
      answer: async (tag?: string) => {
        const tb = table(t, tag);
        next().ok(tb);
        await flush();
        return tb;
      },
      failWith: async (msg: string) => {
        next().fail(new Error(msg));
        await flush();
      },
      inFlight: () => waiting.length,
    };
  }
  const flush = () => new Promise<void>((ok) => setImmediate(ok));
  const caches: { close(): void }[] = [];
  afterEach(() => {
    for (const c of caches.splice(0)) c.close();
    vi.useRealTimers();
  });
  const make = (s: ReturnType<typeof setup>, o: { ttlMs?: number; refreshMs?: number } = {}) => {
    const c = createTableCache(s.read, { now: s.now, log: s.log, refreshMs: 3_600_000, ...o });
    caches.push(c);
    return c;
  };

  it("reads once, then serves from the cache within ttl", async () => {
    const s = setup();
    const c = make(s, { ttlMs: 1000 });
    const first = c.get();
    const t1 = await s.answer();
    expect(await first).toBe(t1);
    s.advance(999);
    expect(await c.get()).toBe(t1);
    expect(s.read).toHaveBeenCalledTimes(1);
    expect(c.staleness()).toBeNull();
    c.close();
  });

  it("re-reads once ttl has passed (serving the last table meanwhile)", async () => {
    const s = setup();
    const c = make(s, { ttlMs: 1000 });
    const first = c.get();
    const t1 = await s.answer("one");
    await first;
    s.advance(1000);
    expect(await c.get()).toBe(t1);
    expect(s.read).toHaveBeenCalledTimes(2);
    const t2 = await s.answer("two");
    expect(await c.get()).toBe(t2);
    expect(s.read).toHaveBeenCalledTimes(2);
    c.close();
  });

  it("concurrent get()s share one read", async () => {
    const s = setup();
    const c = make(s);
    const gets = [c.get(), c.get(), c.get()];
    expect(s.read).toHaveBeenCalledTimes(1);
    const t1 = await s.answer();
    for (const g of gets) expect(await g).toBe(t1);
    // and past ttl, many callers start one refresh between them
    s.advance(5000);
    await Promise.all([c.get(), c.get(), c.get()]);
    expect(s.read).toHaveBeenCalledTimes(2);
    expect(s.inFlight()).toBe(1);
    await s.answer();
    c.close();
  });

  it("keeps the last table while reads fail, says since when and why, and recovers", async () => {
    const s = setup();
    const c = make(s, { ttlMs: 1000 });
    const first = c.get();
    const t1 = await s.answer();
    await first;

    s.advance(1500);
    const failedAt = s.now();
    expect(await c.get()).toBe(t1);
    await s.failWith("database is locked");
    expect(c.staleness()).toEqual({ since: failedAt, error: "database is locked" });
    expect(s.lines.filter((l) => l.level === "error")).toHaveLength(1);

    // a second failure later: still stale since the first, logged once
    s.advance(3000);
    expect(await c.get()).toBe(t1);
    await s.failWith("connection refused");
    expect(c.staleness()).toEqual({ since: failedAt, error: "database is locked" });
    expect(s.lines.filter((l) => l.level === "error")).toHaveLength(1);

    s.advance(1000);
    expect(await c.get()).toBe(t1);
    const t2 = await s.answer();
    expect(c.staleness()).toBeNull();
    expect(await c.get()).toBe(t2);
    expect(s.lines.filter((l) => l.level === "info")).toHaveLength(1);
    c.close();
  });

  it("the very first read failing rejects; the next get() reads again", async () => {
    const s = setup();
    const c = make(s);
    const first = c.get();
    const rejected = expect(first).rejects.toThrow("no such table: shards");
    await s.failWith("no such table: shards");
    await rejected;
    expect(c.staleness()).toEqual({ since: T0, error: "no such table: shards" });

    s.advance(10);
    const second = c.get();
    expect(s.read).toHaveBeenCalledTimes(2);
    const t1 = await s.answer();
    expect(await second).toBe(t1);
    expect(c.staleness()).toBeNull();
    c.close();
  });

  it("refreshes in the background every refreshMs until closed", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const s = setup();
    const c = make(s, { ttlMs: 1000, refreshMs: 500 });
    const first = c.get();
    await s.answer();
    await first;
    await vi.advanceTimersByTimeAsync(500);
    expect(s.read).toHaveBeenCalledTimes(2);
    await s.answer();
    c.close();
    await vi.advanceTimersByTimeAsync(5000);
    expect(s.read).toHaveBeenCalledTimes(2);
  });
});

describe("createIsolateTableCache (a Worker isolate)", () => {
  const table = (readAt: number, tag: string): EndpointTable => ({
    ready: new Map([[tag, []]]),
    declared: new Map(),
    readAt,
  });
  const silent: Log = { info() {}, warn() {}, error() {} };

  it("keeps the table for its time to live, then the request that finds it old reads its own", async () => {
    let t = 0;
    let n = 0;
    const read = vi.fn(async () => table(t, `read${++n}`));
    const cache = createIsolateTableCache(read, { now: () => t, log: silent, ttlMs: 1000 });
    expect([...(await cache.get()).ready.keys()]).toEqual(["read1"]);
    t = 999;
    expect([...(await cache.get()).ready.keys()]).toEqual(["read1"]);
    t = 1000;
    expect([...(await cache.get()).ready.keys()]).toEqual(["read2"]);
    expect(read).toHaveBeenCalledTimes(2);
  });

  it("serves the last table when a read fails, says since when, and fails only with no table at all", async () => {
    let t = 0;
    let failing = true;
    const read = async () => {
      if (failing) throw new Error("database unreachable");
      return table(t, "fresh");
    };
    const cache = createIsolateTableCache(read, { now: () => t, log: silent, ttlMs: 1000 });
    await expect(cache.get()).rejects.toThrow("database unreachable");
    failing = false;
    await cache.get();
    failing = true;
    t = 5000;
    expect([...(await cache.get()).ready.keys()]).toEqual(["fresh"]);
    expect(cache.staleness()).toEqual({ since: 5000, error: "database unreachable" });
    failing = false;
    t = 6000;
    await cache.get();
    expect(cache.staleness()).toBeNull();
  });
});
