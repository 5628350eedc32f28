import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertRows } from "../../api/db/insert-rows.js";
import { events, nodes } from "../../api/db/schema.js";
import { sweepLiveness } from "../../api/nodes/liveness.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";

let t: TestApp;
let nodeToken: string;
beforeAll(async () => {
  t = await createTestApp({ settings: { nodeLostAfterS: 180 } });
  const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
  const r = await t.call("POST", "/api/v1/agents/register", { token: join.json.token, body: registerBody("n1") });
  nodeToken = r.json.nodeToken;
  await t.call("POST", "/api/v1/agents/register", {
    token: join.json.token,
    body: { ...registerBody("n2"), labels: { pool: "dev" } },
  });
});
afterAll(() => t.close());

const state = async (id: string) => (await t.admin("GET", `/api/v1/nodes/${id}`)).json.state;

describe("GET /api/v1/nodes", () => {
  it("lists nodes with state and devices by class, filtered by pool and state", async () => {
    const all = await t.admin("GET", "/api/v1/nodes");
    expect(all.status).toBe(200);
    expect(all.json.items.map((n: { id: string }) => n.id)).toEqual(["n1", "n2"]);
    expect(all.json.items[0]).toMatchObject({
      state: "ready",
      pool: "prod",
      classes: { "h100-80g": 8 },
      hostname: "n1.lab",
    });
    const dev = await t.admin("GET", "/api/v1/nodes?pool=dev");
    expect(dev.json.items.map((n: { id: string }) => n.id)).toEqual(["n2"]);
    const bad = await t.admin("GET", "/api/v1/nodes?state=sleepy");
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].path).toBe("query.state");
  });

  it("needs an admin token", async () => {
    expect((await t.call("GET", "/api/v1/nodes")).status).toBe(401);
    expect(
      (await t.call("GET", "/api/v1/nodes", { token: "llmgw_adm_wrongwrongwrongwrongwrongwrongwrongwron" })).status,
    ).toBe(401);
    const byNode = await t.call("GET", "/api/v1/nodes", { token: nodeToken });
    expect(byNode.status).toBe(403);
    expect(byNode.json.code).toBe("forbidden");
    expect((await t.call("GET", "/api/v1/nodes/n1", { token: nodeToken })).status).toBe(403);
  });

  it("answers 404 for an unknown node", async () => {
    const r = await t.admin("GET", "/api/v1/nodes/nope");
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ code: "not_found", detail: "no node nope" });
    expect((await t.admin("POST", "/api/v1/nodes/nope/cordon")).status).toBe(404);
    expect((await t.admin("DELETE", "/api/v1/nodes/nope")).status).toBe(404);
  });
});

describe("node actions", () => {
  it("cordons, drains and uncordons, each once with an event", async () => {
    const c = await t.admin("POST", "/api/v1/nodes/n2/cordon");
    expect(c.status).toBe(200);
    expect(c.json).toMatchObject({ id: "n2", state: "cordoned", adminState: "cordoned" });
    await t.admin("POST", "/api/v1/nodes/n2/cordon");
    expect((await t.admin("POST", "/api/v1/nodes/n2/drain")).json.state).toBe("draining");
    expect((await t.admin("POST", "/api/v1/nodes/n2/uncordon")).json.state).toBe("ready");
    const ev = await t.admin("GET", "/api/v1/events?node=n2");
    expect(ev.json.items.map((e: { type: string }) => e.type).slice(0, 3)).toEqual([
      "node_uncordoned",
      "node_draining",
      "node_cordoned",
    ]);
    expect(ev.json.items.filter((e: { type: string }) => e.type === "node_cordoned")).toHaveLength(1);
  });

  it("deletes a node: then 404, and its token no longer works", async () => {
    const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
    const r = await t.call("POST", "/api/v1/agents/register", { token: join.json.token, body: registerBody("gone") });
    expect((await t.admin("DELETE", "/api/v1/nodes/gone")).status).toBe(204);
    expect((await t.admin("GET", "/api/v1/nodes/gone")).status).toBe(404);
    expect((await t.call("POST", "/api/v1/agents/gone/heartbeat", { token: r.json.nodeToken, body: {} })).status).toBe(
      401,
    );
    const again = await t.call("POST", "/api/v1/agents/register", {
      token: join.json.token,
      body: registerBody("gone"),
    });
    expect(again.status).toBe(201);
  });
});

describe("liveness", () => {
  it("turns a silent node lost after nodeLostAfterS on every read, and the sweep records it once", async () => {
    await t.call("POST", "/api/v1/agents/n1/heartbeat", { token: nodeToken, body: {} });
    t.clock.advance(180_000);
    expect(await state("n1")).toBe("ready");
    t.clock.advance(1_000);
    expect(await state("n1")).toBe("lost");
    const lostList = await t.admin("GET", "/api/v1/nodes?state=lost");
    expect(lostList.json.items.map((n: { id: string }) => n.id)).toContain("n1");

    expect(await sweepLiveness(t.store, t.clock.now(), 180)).toContain("n1");
    expect(await sweepLiveness(t.store, t.clock.now(), 180)).toEqual([]);
    const lost = await t.admin("GET", "/api/v1/events?node=n1&type=node_lost");
    expect(lost.json.items).toHaveLength(1);
    expect(lost.json.items[0].message).toContain("no heartbeat or poll for 181 s");

    await t.call("POST", "/api/v1/agents/n1/heartbeat", { token: nodeToken, body: {} });
    expect(await state("n1")).toBe("ready");
    const back = await t.admin("GET", "/api/v1/events?node=n1&type=node_recovered");
    expect(back.json.items).toHaveLength(1);
  });

  it("keeps a cordoned node cordoned when it comes back", async () => {
    await t.admin("POST", "/api/v1/nodes/n1/cordon");
    t.clock.advance(200_000);
    expect(await state("n1")).toBe("lost");
    await t.call("POST", "/api/v1/agents/n1/status", {
      token: nodeToken,
      body: { shards: [{ shardId: "s", state: "ready" }] },
    });
    expect(await state("n1")).toBe("cordoned");
  });
});

describe("the liveness sweep at fleet size", () => {
  it("marks a whole fleet silent at once lost, with an event each (past SQLite's 32,766 bound values in one INSERT)", async () => {
    const fleet = await createTestApp({ settings: { nodeLostAfterS: 180 } });
    try {
      const at = fleet.clock.now();
      const rows = Array.from({ length: 3500 }, (_, i) => ({
        id: `f${i}`,
        hostname: `f${i}`,
        mgmtAddr: "10.0.0.1",
        pool: "default",
        labels: "{}",
        agentVersion: "test",
        tokenHash: `hash-${i}`,
        inventory: "{}",
        registeredAt: at,
        lastSeenAt: at,
      }));
      await fleet.store.write((tx) => insertRows(tx, nodes, rows as never));
      fleet.clock.advance(181_000);
      expect(await sweepLiveness(fleet.store, fleet.clock.now(), 180)).toHaveLength(3500);
      const [lost] = await fleet.db.select({ n: count() }).from(events).where(eq(events.type, "node_lost"));
      expect(lost!.n).toBe(3500);
    } finally {
      await fleet.close();
    }
  });
});
