import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inventory } from "../../shared/schemas/inventory.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { GB200_XML, H100_XML, inventoryFromCapture, registerBody } from "../helpers/inventory.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function joinToken(opts: object = {}) {
  const r = await t.admin("POST", "/api/v1/join-tokens", { body: opts });
  expect(r.status).toBe(201);
  return r.json.token as string;
}

async function register(nodeId: string, token: string, inventory = inventoryFromCapture(H100_XML)) {
  return t.call("POST", "/api/v1/agents/register", { token, body: registerBody(nodeId, inventory) });
}

describe("POST /api/v1/agents/register", () => {
  it("registers a node from a real 8-GPU capture and reads the inventory back unchanged", async () => {
    const inventory = inventoryFromCapture(H100_XML);
    const r = await register("h100-a", await joinToken(), inventory);
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ nodeId: "h100-a", heartbeatIntervalS: 60, pollWaitS: 50, nodeLostAfterS: 180 });
    expect(r.json.nodeToken).toMatch(/^llmgw_node_[A-Za-z0-9]{40}$/);

    const node = await t.admin("GET", "/api/v1/nodes/h100-a");
    expect(node.status).toBe(200);
    expect(node.json.inventory).toEqual(Inventory.parse(inventory));
    expect(node.json.inventory.gpus).toHaveLength(8);
    expect(node.json).toMatchObject({
      state: "ready",
      pool: "prod",
      labels: { pool: "prod", rack: "r12" },
      classes: { "h100-80g": 8 },
    });
    expect(node.json.devices.map((d: { label: string }) => d.label)).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
  });

  it("re-registers with the node's own token, keeping that token", async () => {
    const first = await register("h100-b", await joinToken());
    const again = await register("h100-b", first.json.nodeToken);
    expect(again.status).toBe(200);
    expect(again.json.nodeToken).toBe(first.json.nodeToken);
    const events = await t.admin("GET", "/api/v1/events?node=h100-b");
    expect(events.json.items.map((e: { type: string }) => e.type)).toEqual(["node_reregistered", "node_registered"]);
  });

  it("refuses a join token for a node id that is already registered (no takeover)", async () => {
    const first = await register("h100-c", await joinToken());
    const r = await register("h100-c", await joinToken());
    expect(r.status).toBe(409);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.json.code).toBe("node_exists");
    const hb = await t.call("POST", "/api/v1/agents/h100-c/heartbeat", { token: first.json.nodeToken, body: {} });
    expect(hb.status).toBe(200);
  });

  it("lets an admin reset a node, replacing its token", async () => {
    const first = await register("h100-d", await joinToken());
    const reset = await register("h100-d", t.adminToken);
    expect(reset.status).toBe(200);
    expect(reset.json.nodeToken).not.toBe(first.json.nodeToken);
    const old = await t.call("POST", "/api/v1/agents/h100-d/heartbeat", { token: first.json.nodeToken, body: {} });
    expect(old.status).toBe(401);
  });

  it("counts join token uses and refuses once they are spent or expired", async () => {
    const once = await joinToken({ maxUses: 1 });
    expect((await register("once-1", once)).status).toBe(201);
    const spent = await register("once-2", once);
    expect(spent.status).toBe(403);
    expect(spent.json).toMatchObject({ code: "join_token_invalid" });
    expect(spent.json.detail).toContain("used 1 of 1");

    const short = await joinToken({ expiresInS: 60 });
    t.clock.advance(61_000);
    const late = await register("late-1", short);
    expect(late.status).toBe(403);
    expect(late.json.detail).toContain("expired");
    expect((await t.admin("GET", "/api/v1/nodes/once-2")).status).toBe(404);
  });

  it("refuses missing, unknown and wrong-node tokens", async () => {
    const none = await t.call("POST", "/api/v1/agents/register", { body: registerBody("x1") });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect((await register("x1", "llmgw_join_notarealtokenatall0000000000000000")).status).toBe(401);
    expect((await register("x1", "garbage")).status).toBe(401);
    const other = await register("x2", await joinToken());
    const r = await register("x3", other.json.nodeToken);
    expect(r.status).toBe(403);
    expect(r.json.detail).toContain("belongs to node x2");
  });

  it("rejects unknown and invalid fields with 400 naming each field, writing nothing", async () => {
    const token = await joinToken({ maxUses: 5 });
    const body = registerBody("bad-1") as Record<string, unknown>;
    const r = await t.call("POST", "/api/v1/agents/register", {
      token,
      body: { ...body, colour: "blue", inventory: { ...(body.inventory as object), gpus: [{ index: "zero" }] } },
    });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe("validation_failed");
    const paths = r.json.errors.map((e: { path: string }) => e.path);
    expect(paths).toContain("colour");
    expect(paths).toContain("inventory.gpus.0.index");
    expect(paths).toContain("inventory.gpus.0.uuid");
    expect((await t.admin("GET", "/api/v1/nodes/bad-1")).status).toBe(404);
    const tokens = await t.admin("GET", "/api/v1/join-tokens");
    expect(tokens.json.items.find((j: { maxUses: number }) => j.maxUses === 5).uses).toBe(0);
  });

  it("answers malformed JSON, a wrong content type and a 10 MB body with problem+json", async () => {
    const token = await joinToken();
    const bad = await t.call("POST", "/api/v1/agents/register", { token, body: '{"nodeId": ' });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe("malformed_json");
    const text = await t.call("POST", "/api/v1/agents/register", {
      token,
      body: "nodeId=x",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);
    expect(text.json.code).toBe("unsupported_media_type");
    expect(text.headers.get("content-type")).toBe("application/problem+json");
    const huge = JSON.stringify({ ...registerBody("huge"), padding: "x".repeat(10 * 1024 * 1024) });
    const big = await t.call("POST", "/api/v1/agents/register", { token, body: huge });
    expect(big.status).toBe(413);
    expect(big.json.code).toBe("payload_too_large");
    expect((await t.admin("GET", "/api/v1/nodes/huge")).status).toBe(404);
  });
});

describe("heartbeat and status", () => {
  it("stores fabric changes and records one event when every card of a tray leaves the fabric", async () => {
    const inv = inventoryFromCapture(GB200_XML);
    const reg = await register("tray-1", await joinToken(), {
      ...inv,
      imex: { state: "ready", channels: 1, domainState: "UP" },
    });
    const gpus = inv.gpus.map((g) => ({
      uuid: g.uuid,
      fabric: { ...g.fabric!, state: "In Progress", status: "In Progress" },
    }));
    const hb = await t.call("POST", "/api/v1/agents/tray-1/heartbeat", {
      token: reg.json.nodeToken,
      body: { gpus, imex: { state: "down", channels: 1 }, memoryAvailableMiB: 1234 },
    });
    expect(hb.status).toBe(200);
    const node = await t.admin("GET", "/api/v1/nodes/tray-1");
    expect(node.json.inventory.gpus.map((g: { fabric: { state: string } }) => g.fabric.state)).toEqual(
      Array(4).fill("In Progress"),
    );
    expect(node.json.inventory.imex.state).toBe("down");
    expect(node.json.inventory.memory.availableMiB).toBe(1234);
    expect(node.json.lastHeartbeatAt).toBe(t.clock.now());
    const fabric = await t.admin("GET", "/api/v1/events?node=tray-1&type=fabric_left");
    expect(fabric.json.items).toHaveLength(1);
    expect(fabric.json.items[0].message).toContain(
      "all 4 GPUs left NVLink domain 00000001-0000-0000-0000-000000000001.2",
    );
    const imex = await t.admin("GET", "/api/v1/events?node=tray-1&type=imex_changed");
    expect(imex.json.items[0].message).toContain("IMEX ready (1 channels) → down (1 channels)");
  });

  it("refuses a heartbeat for another node's id (403) and GPUs the inventory lacks (409)", async () => {
    const a = await register("hb-a", await joinToken());
    await register("hb-b", await joinToken());
    const r = await t.call("POST", "/api/v1/agents/hb-b/heartbeat", { token: a.json.nodeToken, body: {} });
    expect(r.status).toBe(403);
    const admin = await t.admin("POST", "/api/v1/agents/hb-a/heartbeat", { body: {} });
    expect(admin.status).toBe(403);
    const ghost = await t.call("POST", "/api/v1/agents/hb-a/heartbeat", {
      token: a.json.nodeToken,
      body: { gpus: [{ uuid: "GPU-ghost" }] },
    });
    expect(ghost.status).toBe(409);
    expect(ghost.json.detail).toContain("GPU-ghost");
    const unknownField = await t.call("POST", "/api/v1/agents/hb-a/heartbeat", {
      token: a.json.nodeToken,
      body: { gpus: [], mood: "ok" },
    });
    expect(unknownField.status).toBe(400);
    expect(unknownField.json.errors[0].path).toBe("mood");
  });

  it("stores shard transitions, reading unknown states as failed", async () => {
    const a = await register("st-a", await joinToken());
    const r = await t.call("POST", "/api/v1/agents/st-a/status", {
      token: a.json.nodeToken,
      body: {
        shards: [
          { shardId: "s1", replicaId: "r1", state: "loading" },
          { shardId: "s2", state: "warming-up" },
        ],
      },
    });
    expect(r.status).toBe(200);
    await t.call("POST", "/api/v1/agents/st-a/status", {
      token: a.json.nodeToken,
      body: { shards: [{ shardId: "s1", state: "ready" }] },
    });
    const node = await t.admin("GET", "/api/v1/nodes/st-a");
    expect(node.json.shards).toMatchObject([
      { shardId: "s1", replicaId: "r1", state: "ready" },
      { shardId: "s2", state: "failed", message: 'unknown state "warming-up" read as failed' },
    ]);
    const empty = await t.call("POST", "/api/v1/agents/st-a/status", { token: a.json.nodeToken, body: { shards: [] } });
    expect(empty.status).toBe(400);
  });

  it("keeps the newer of two reports that cross on their way, by the node's time, until the node's clock is trusted again", async () => {
    const a = await register("st-b", await joinToken());
    const token = a.json.nodeToken;
    const state = async () =>
      (await t.admin("GET", "/api/v1/nodes/st-b")).json.shards.map((s: { state: string }) => s.state);
    const t0 = t.clock.now();
    const report = (state: string, at: number) => ({ shardId: "s1", replicaId: "r1", state, at });
    // `ready` (timed t0 + 3 s) reaches one instance first; a heartbeat sent before it, still saying `starting`
    // (timed t0), is written after it by another
    await t.call("POST", "/api/v1/agents/st-b/status", { token, body: { shards: [report("starting", t0)] } });
    await t.call("POST", "/api/v1/agents/st-b/status", { token, body: { shards: [report("ready", t0 + 3000)] } });
    t.clock.advance(1000);
    const hb = await t.call("POST", "/api/v1/agents/st-b/heartbeat", {
      token,
      body: { shards: [report("starting", t0)] },
    });
    expect(hb.status).toBe(200);
    expect(await state()).toEqual(["ready"]);
    // a report the node timed later moves it on
    await t.call("POST", "/api/v1/agents/st-b/status", { token, body: { shards: [report("failed", t0 + 4000)] } });
    expect(await state()).toEqual(["failed"]);
    // the node's clock stepped back a minute: its reports count again once the stored one is 30 s old by ours
    await t.call("POST", "/api/v1/agents/st-b/status", { token, body: { shards: [report("ready", t0 - 60_000)] } });
    expect(await state()).toEqual(["failed"]);
    t.clock.advance(31_000);
    await t.call("POST", "/api/v1/agents/st-b/status", { token, body: { shards: [report("ready", t0 - 30_000)] } });
    expect(await state()).toEqual(["ready"]);
  });
});
