import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allocations, nodes, replicas } from "../../api/db/schema.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";

let t: TestApp;
const tokens = new Map<string, string>();

async function register(id: string, pool = "prod") {
  const r = await t.call("POST", "/api/v1/agents/register", {
    token: t.adminToken,
    body: { ...registerBody(id, nodeInventory(id)), labels: { pool } },
  });
  expect(r.status).toBe(201);
  tokens.set(id, r.json.nodeToken);
}
const poll = (id: string, query = "") =>
  t.call("GET", `/api/v1/agents/${id}/assignments${query}`, { token: tokens.get(id) });

beforeAll(async () => {
  t = await createTestApp();
  await t.admin("PUT", "/api/v1/models/llama-70b", {
    body: {
      spec: {
        weightsPath: "/models/llama-3.1-70b",
        profiles: [{ name: "tp4", engine: "vllm", gpuClass: "h100-80g", tp: 4, gpusPerNode: 4 }],
      },
    },
  });
  await register("hgx-1");
});
afterAll(() => t.close());

describe("GET /api/v1/agents/{node}/assignments", () => {
  it("places on the poll and hands the node its full desired set", async () => {
    await t.admin("PUT", "/api/v1/deployments/chat", {
      body: { spec: { model: "llama-70b", replicas: 2, pool: "prod" } },
    });
    const r = await poll("hgx-1");
    expect(r.status).toBe(200);
    expect(Number(r.headers.get("x-llmgw-index"))).toBe(r.json.index);
    expect(r.json.index).toBeGreaterThan(0);
    const shards = r.json.shards as {
      visibleDevices: string;
      httpPort: number;
      profile: { engine: string; tp: number };
      model: string;
      fabric: string;
      rank: number;
    }[];
    expect(shards.map((s) => s.visibleDevices).sort()).toEqual(["0,1,2,3", "4,5,6,7"]);
    expect(new Set(shards.map((s) => s.httpPort)).size).toBe(2);
    expect(shards[0]).toMatchObject({
      model: "llama-70b",
      fabric: "single",
      rank: 0,
      profile: { engine: "vllm", tp: 4 },
    });
    const d = await t.admin("GET", "/api/v1/deployments/chat");
    expect(d.json.status).toMatchObject({ phase: "Starting", desired: 2, placed: 2, ready: 0, pending: [] });
  });

  it("answers a stale index at once with the full set; one it never gave is state_behind", async () => {
    const now = await poll("hgx-1");
    for (const index of [0, now.json.index - 1]) {
      const r = await poll("hgx-1", `?index=${index}&wait=60`);
      expect(r.json.shards).toHaveLength(2);
    }
    const future = await poll("hgx-1", `?index=${now.json.index + 100}&wait=60`);
    expect([future.status, future.json.code]).toEqual([409, "state_behind"]);
  });

  it("wakes a waiting poll when the deployment changes, before its wait expires", async () => {
    const first = await poll("hgx-1");
    const began = Date.now();
    const waiting = poll("hgx-1", `?index=${first.json.index}&wait=50`);
    // the write itself places and wakes the parked poll: no other poll needs to come
    await t.admin("PUT", "/api/v1/deployments/chat", {
      body: { spec: { model: "llama-70b", replicas: 1, pool: "prod" } },
    });
    const woke = await waiting;
    expect(Date.now() - began).toBeLessThan(45_000); // woken by the change, not by the end of its 50 s wait
    expect(woke.json.index).toBeGreaterThan(first.json.index);
    expect(woke.json.shards).toHaveLength(1);
  }, 60_000);

  it("keeps the deployment pending with a reason when nothing fits", async () => {
    await t.admin("PUT", "/api/v1/deployments/too-big", {
      body: { spec: { model: "llama-70b", replicas: 5, pool: "prod" } },
    });
    await poll("hgx-1");
    const d = await t.admin("GET", "/api/v1/deployments/too-big");
    expect(d.json.status.placed).toBe(1);
    expect(d.json.status.pending[0].count).toBe(4);
    expect(d.json.status.pending[0].reason).toMatch(/h100-80g/);
    await t.admin("DELETE", "/api/v1/deployments/too-big");
  });

  it("tells what the fleet holds and what more fits", async () => {
    await poll("hgx-1"); // placement releases the deleted deployment's replica
    const r = await t.admin("GET", "/api/v1/plan");
    expect(r.status).toBe(200);
    expect(r.json.classes).toEqual([{ class: "h100-80g", total: 8, free: 4, used: 4, unavailable: [] }]);
    expect(r.json.profiles).toEqual([
      { model: "llama-70b", profile: "tp4", gpuClass: "h100-80g", pool: "prod", fits: 1, nodes: { "hgx-1": 1 } },
    ]);
    await t.admin("POST", "/api/v1/nodes/hgx-1/cordon");
    const cordoned = await t.admin("GET", "/api/v1/plan");
    expect(cordoned.json.classes[0]).toMatchObject({
      free: 0,
      used: 4,
      unavailable: [{ count: 4, reason: "node cordoned" }],
    });
    expect(cordoned.json.profiles[0]).toMatchObject({ fits: 0, reason: expect.stringContaining("cordoned") });
    await t.admin("POST", "/api/v1/nodes/hgx-1/uncordon");
  });

  it("reports ready once the agent says its shards are", async () => {
    const r = await poll("hgx-1");
    const s = r.json.shards.find((x: { deployment: string }) => x.deployment === "chat");
    await t.call("POST", "/api/v1/agents/hgx-1/status", {
      token: tokens.get("hgx-1"),
      body: { shards: [{ shardId: s.shardId, replicaId: s.replicaId, state: "ready" }] },
    });
    expect((await t.admin("GET", "/api/v1/deployments/chat")).json.status).toMatchObject({
      phase: "Ready",
      placed: 1,
      ready: 1,
    });
    const list = await t.admin("GET", "/api/v1/replicas?deployment=chat");
    expect(list.json.items).toHaveLength(1);
    const replica = list.json.items[0];
    expect(replica).toMatchObject({
      id: s.replicaId,
      deployment: "chat",
      profile: "tp4",
      state: "ready",
      endpoint: `http://10.0.0.11:${s.httpPort}`,
    });
    expect(replica.shards[0]).toMatchObject({ nodeId: "hgx-1", rank: 0, fabric: "single", state: "ready" });
    expect(replica.shards[0].devices).toHaveLength(4);
    expect((await t.admin("GET", `/api/v1/replicas/${s.replicaId}`)).json.id).toBe(s.replicaId);
    expect((await t.admin("GET", "/api/v1/replicas/r999")).status).toBe(404);
  });
});

describe("concurrent polls", () => {
  it("refreshes the node's last-seen time only once it is a third of the lost-after time old", async () => {
    await register("quiet-1");
    const seen = async () =>
      (await t.db.select({ at: nodes.lastSeenAt }).from(nodes).where(eq(nodes.id, "quiet-1")))[0]!.at;
    const registered = await seen();
    // lost after 180 s by default: a poll 50 s on writes nothing (heartbeats refresh it too)
    t.clock.advance(50_000);
    expect((await poll("quiet-1")).status).toBe(200);
    expect(await seen()).toBe(registered);
    t.clock.advance(11_000);
    expect((await poll("quiet-1")).status).toBe(200);
    expect(await seen()).toBe(t.clock.now());
    await t.admin("DELETE", "/api/v1/nodes/quiet-1");
  });

  it("50 polls from 20 nodes at once: every replica placed once, no device twice", async () => {
    for (let i = 0; i < 20; i++) await register(`n${i}`, "bulk");
    await t.admin("PUT", "/api/v1/deployments/bulk", {
      body: { spec: { model: "llama-70b", replicas: 30, pool: "bulk" } },
    });
    const polls = await Promise.all(Array.from({ length: 50 }, (_, i) => poll(`n${i % 20}`)));
    expect(polls.every((p) => p.status === 200)).toBe(true);
    const rows = await t.db.select().from(replicas);
    expect(rows.filter((r) => r.deployment === "bulk")).toHaveLength(30);
    const held = await t.db.select().from(allocations);
    expect(new Set(held.map((a) => `${a.nodeId}/${a.deviceId}`)).size).toBe(held.length);
    const all = (await Promise.all(Array.from({ length: 20 }, (_, i) => poll(`n${i}`)))).flatMap((p) => p.json.shards);
    expect(all.filter((s: { deployment: string }) => s.deployment === "bulk")).toHaveLength(30);
  });
});
