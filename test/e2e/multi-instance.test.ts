// Two `llmgw serve` processes on one database, as docs/deploy.md runs several instances: on the embedded file (WAL,
// two processes) and on a libSQL server (sqld). Every agent poll must answer 200, however the instances race.
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { type Serve, startInstances, startSqld } from "../helpers/instances.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";
import { startServe, stop, until } from "../helpers/process.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const ADMIN = "multi-instance-admin-token-0000000001";
const json = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

type Node = { id: string; token: string };
type Shard = { shardId: string; replicaId: string; deviceIds: number[] };
type Assignments = { index: number; shards: Shard[] };

/** An agent's poll of its assignments on `url`; any answer but 200 fails the test, naming the node and the body. */
async function poll(url: string, node: Node, query = ""): Promise<Assignments> {
  const r = await fetch(`${url}/api/v1/agents/${node.id}/assignments${query}`, { headers: json(node.token) });
  const text = await r.text();
  expect(r.status, `poll of ${node.id} on ${url} answered ${text}`).toBe(200);
  return JSON.parse(text) as Assignments;
}

const put = (url: string, path: string, body: object) =>
  fetch(`${url}/api/v1/${path}`, { method: "PUT", headers: json(ADMIN), body: JSON.stringify(body) });

/** Registers 8-GPU H100 nodes `<prefix>0…` in `pool`, alternating between the instances. */
async function register(urls: string[], prefix: string, count: number, pool: string): Promise<Node[]> {
  const nodes: Node[] = [];
  for (let i = 0; i < count; i++) {
    const id = `${prefix}${i}`;
    const r = await fetch(`${urls[i % urls.length]}/api/v1/agents/register`, {
      method: "POST",
      headers: json(ADMIN),
      body: JSON.stringify({ ...registerBody(id, nodeInventory(id)), labels: { pool } }),
    });
    expect(r.status).toBe(201);
    nodes.push({ id, token: (await r.json()).nodeToken });
  }
  return nodes;
}

/**
 * Every node's assignments as each instance answers them (they must agree); fails unless every replica has exactly one
 * shard (the profiles here are single-node) and no device is held twice. Returns the shards.
 */
async function placedOnce(urls: string[], nodes: Node[]): Promise<Shard[]> {
  const sets = await Promise.all(
    nodes.map(async (n) => {
      const seen = await Promise.all(urls.map((u) => poll(u, n)));
      for (const s of seen.slice(1)) expect(s, `${n.id} as the instances answer it`).toEqual(seen[0]);
      return seen[0]!.shards;
    }),
  );
  const shards = sets.flat();
  expect(new Set(shards.map((s) => s.replicaId)).size, "replicas with more than one shard").toBe(shards.length);
  const held = sets.flatMap((s, i) => s.flatMap((x) => x.deviceIds.map((d) => `${nodes[i]!.id}/${d}`)));
  expect(new Set(held).size, "devices held twice").toBe(held.length);
  return shards;
}

/** How many shards the nodes hold now, as `url` answers (no assertions: for waiting on a count). */
async function shardCount(url: string, nodes: Node[]): Promise<number> {
  const sets = await Promise.all(nodes.map((n) => poll(url, n)));
  return sets.reduce((sum, s) => sum + s.shards.length, 0);
}

/** Two instances on one database: registrations, a deployment, then polls spread over both at once. */
async function exercise(a: string, b: string): Promise<Node[]> {
  const nodes = await register([a, b], "n", 10, "p");
  expect(
    (
      await put(a, "models/m", {
        spec: {
          weightsPath: "/m",
          profiles: [{ name: "tp4", engine: "vllm", gpuClass: "h100-80g", tp: 4, gpusPerNode: 4 }],
        },
      })
    ).status,
  ).toBe(201);
  expect((await put(b, "deployments/d", { spec: { model: "m", replicas: 20, pool: "p" } })).status).toBe(201);
  await Promise.all(Array.from({ length: 40 }, (_, i) => poll(i % 2 ? a : b, nodes[i % 10]!)));
  const shards = await placedOnce([a, b], nodes);
  expect(new Set(shards.map((s) => s.replicaId)).size).toBe(20);
  expect(shards.flatMap((s) => s.deviceIds)).toHaveLength(80);

  // A poll waiting on one instance wakes when the other one changes the node's assignments. A poll parked on the same
  // instance for a node the change leaves alone, with the shorter wait, is still waiting when it answers: so the
  // answer came from the change (the other instance's write seen by this one's watcher), not from its wait running out.
  const [idle] = await register([a], "idle", 1, "unused");
  const n1 = nodes[1]!;
  const before = await poll(b, n1);
  const parked = new AbortController();
  const control = fetch(`${b}/api/v1/agents/${idle!.id}/assignments?index=${(await poll(b, idle!)).index}&wait=30`, {
    headers: json(idle!.token),
    signal: parked.signal,
  }).then(
    () => "the untouched node's 30 s wait ended",
    () => "aborted",
  );
  const woken = poll(b, n1, `?index=${before.index}&wait=60`);
  expect((await put(a, "deployments/d", { spec: { model: "m", replicas: 0, pool: "p" } })).status).toBe(200);
  const first = await Promise.race([woken.then(() => "woken by the change"), control]);
  expect(first).toBe("woken by the change");
  parked.abort();
  expect(await control).toBe("aborted");
  const after = await woken;
  expect(after.index).toBeGreaterThan(before.index);
  expect(after.shards).toEqual([]);
  return nodes;
}

// Each instance runs WORKERS loops of ROUNDS: a PUT that changes the deployment's size, then at once a poll of every
// node on that instance — so both instances place the same generations at the same moment, over and over.
const WORKERS = 3;
const ROUNDS = 5;
const SIZES = [60, 20, 45, 0];

/**
 * Both instances writing and placing in a tight loop: every answer 2xx, and once it stops, the last size placed exactly
 * once. Each replica id is placed by one instance only, as their logs say (`placed replica …`).
 */
async function storm(a: string, b: string, nodes: Node[], logs: () => string) {
  const small = { weightsPath: "/s", profiles: [{ name: "one", engine: "vllm", gpuClass: "h100-80g" }] };
  expect((await put(b, "models/small", { spec: small })).status).toBe(201);
  await Promise.all(
    [a, b].flatMap((url) =>
      Array.from({ length: WORKERS }, async (_, w) => {
        for (let r = 0; r < ROUNDS; r++) {
          const replicas = SIZES[(r + w) % SIZES.length]!;
          const res = await put(url, "deployments/s", { spec: { model: "small", replicas, pool: "p" } });
          expect([200, 201], `PUT on ${url}: ${await res.text()}`).toContain(res.status);
          await Promise.all(nodes.map((n) => poll(url, n)));
        }
      }),
    ),
  );
  expect((await put(a, "deployments/s", { spec: { model: "small", replicas: 50, pool: "p" } })).status).toBe(200);
  await until(async () => (await shardCount(b, nodes)) === 50, 20_000, "50 replicas of s placed");
  const shards = await placedOnce([a, b], nodes);
  expect(shards).toHaveLength(50);
  const placed = [...logs().matchAll(/placed replica (r\d+) of s on/g)].map((m) => m[1]);
  expect(placed.length).toBeGreaterThanOrEqual(50);
  expect(
    placed.filter((id, i) => placed.indexOf(id) !== i),
    "replicas placed twice",
  ).toEqual([]);
}

describe("two llmgw serve processes", () => {
  it("on one embedded file database: every replica placed once, a poll wakes across instances, and both placing at once", async () => {
    const db = join(tmp.dir, "shared.db");
    const env = { LLMGW_ADMIN_TOKEN: ADMIN };
    const a = await startServe(["--db", db], { env });
    const b = await startServe(["--db", db], { env });
    try {
      const nodes = await exercise(a.url, b.url);
      await storm(a.url, b.url, nodes, () => a.output() + b.output());
    } finally {
      await Promise.all([stop(a), stop(b)]);
    }
  }, 90_000);

  // The instances' busy timeout on a file database (createClient's `timeout` in api/node.ts openDb).
  const BUSY_TIMEOUT_MS = 5000;
  // Longer than one busy timeout, shorter than two: a placement that does not retry has failed by then.
  const HOLD_MS = BUSY_TIMEOUT_MS + 1500;

  it("on one embedded file database: a placement that finds the database locked past its busy timeout retries, and the polls answer 200", async () => {
    const db = join(tmp.dir, "locked.db");
    // no liveness sweep in the test's window: only the polls below place
    const env = { LLMGW_ADMIN_TOKEN: ADMIN, LLMGW_SWEEP_INTERVAL_S: "3600" };
    const a = await startServe(["--db", db], { env });
    const b = await startServe(["--db", db], { env });
    const other = createClient({ url: `file:${db}` });
    try {
      const nodes = await register([a.url, b.url], "l", 2, "l");
      const small = { weightsPath: "/s", profiles: [{ name: "one", engine: "vllm", gpuClass: "h100-80g" }] };
      expect((await put(a.url, "models/small", { spec: small })).status).toBe(201);
      expect((await put(b.url, "deployments/l", { spec: { model: "small", replicas: 0, pool: "l" } })).status).toBe(
        201,
      );
      expect(await shardCount(a.url, nodes)).toBe(0);

      // Another writer declares two replicas and, in the same breath, takes the write lock and keeps it past the
      // instances' busy timeout. Nothing runs on the instances meanwhile (no agent, no sweep), so no instance has
      // placed the change when the polls come: each one's placement waits on the lock, gets SQLITE_BUSY, and must
      // try again.
      await other.batch(
        [
          "UPDATE deployments SET spec = json_set(spec, '$.replicas', 2) WHERE name = 'l'",
          "UPDATE cluster SET generation = generation + 1 WHERE id = 1",
        ],
        "write",
      );
      const lock = await other.transaction("write");
      let held = true;
      const answers = Promise.all(
        [a.url, b.url].flatMap((url) =>
          nodes.map(async (n) => {
            const r = await fetch(`${url}/api/v1/agents/${n.id}/assignments`, { headers: json(n.token) });
            const body = await r.text();
            return { poll: `${n.id} on ${url}`, status: r.status, held, ...(r.ok ? {} : { body }) };
          }),
        ),
      );
      // the lock kept is the fault under test, not a wait for something
      await new Promise((r) => setTimeout(r, HOLD_MS));
      held = false;
      await lock.rollback();
      // every poll answered 200, and only once the lock had gone: each one's placement did wait on it
      expect(await answers).toEqual(
        [a.url, b.url].flatMap((url) => nodes.map((n) => ({ poll: `${n.id} on ${url}`, status: 200, held: false }))),
      );
      expect(await placedOnce([a.url, b.url], nodes)).toHaveLength(2);
    } finally {
      other.close();
      await Promise.all([stop(a), stop(b)]);
    }
  }, 60_000);

  it("on one libSQL server (sqld): the same, and both placing at once", async () => {
    const sqld = await startSqld();
    try {
      const { instances, close } = await startInstances(sqld.url, 2, { LLMGW_ADMIN_TOKEN: ADMIN });
      const [a, b] = instances as [Serve, Serve];
      try {
        const nodes = await exercise(a.url, b.url);
        await storm(a.url, b.url, nodes, () => a.output() + b.output());
      } finally {
        await close();
      }
    } finally {
      await sqld.close();
    }
  }, 120_000);
});
