// GET /api/v1/agents/{node}/nvlink-peers on a fleet registered through the API (copies of the real GB200 and HGX
// captures, changed), and the heartbeat's imexConfig summary, which the API accepts without changing the stored
// inventory (test/api/imex-config.test.ts shows where it is kept).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imexConfigDigest } from "../../shared/imex-config.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { GB200_XML, nodeInventory, registerBody } from "../helpers/inventory.js";

const DOMAIN = "00000001-0000-0000-0000-000000000001.2";
const OTHER = "00000002-0000-0000-0000-000000000002.2";

let t: TestApp;
const tokens: Record<string, string> = {};

/** A GB200 tray of the real capture as node `id`, its cards moved to cluster `cluster` when given. */
function tray(id: string, cluster?: string): Inventory {
  const inv = nodeInventory(id, GB200_XML);
  if (cluster) for (const g of inv.gpus) g.fabric = { ...g.fabric!, clusterUuid: cluster };
  return inv;
}

async function register(id: string, mgmtAddr: string, inventory: Inventory) {
  const join = (await t.admin("POST", "/api/v1/join-tokens", { body: {} })).json.token as string;
  const r = await t.call("POST", "/api/v1/agents/register", {
    token: join,
    body: { ...registerBody(id, inventory), mgmtAddr },
  });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  tokens[id] = r.json.nodeToken;
}

const peersOf = (id: string, token = tokens[id]) => t.call("GET", `/api/v1/agents/${id}/nvlink-peers`, { token });

beforeAll(async () => {
  t = await createTestApp();
  // registered out of address order; gb-d's cards stop naming a cluster after it registered (a fabric manager restart)
  await register("gb-b", "10.0.0.12", tray("gb-b"));
  await register("gb-a", "10.0.0.11", tray("gb-a"));
  await register("gb-d", "10.0.0.14", tray("gb-d"));
  await register("gb-x", "10.0.1.11", tray("gb-x", "00000002-0000-0000-0000-000000000002"));
  await register("hgx-01", "10.0.2.11", nodeInventory("hgx-01"));
  const gpus = tray("gb-d").gpus.map((g) => ({ uuid: g.uuid, fabric: { state: "In Progress", status: "N/A" } }));
  const hb = await t.call("POST", "/api/v1/agents/gb-d/heartbeat", { token: tokens["gb-d"], body: { gpus } });
  expect(hb.status).toBe(200);
});
afterAll(() => t.close());

describe("GET /api/v1/agents/{node}/nvlink-peers", () => {
  it("gives a node of a domain the sorted addresses of every node in it, itself and a tray out of it now included", async () => {
    const r = await peersOf("gb-b");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ domain: DOMAIN, addresses: ["10.0.0.11", "10.0.0.12", "10.0.0.14"] });
    expect((await peersOf("gb-d")).json).toEqual(r.json);
  });

  it("keeps each domain to itself", async () => {
    expect((await peersOf("gb-x")).json).toEqual({ domain: OTHER, addresses: ["10.0.1.11"] });
  });

  it("gives a node in no domain (a single machine's NVSwitch) null and no address", async () => {
    const r = await peersOf("hgx-01");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ domain: null, addresses: [] });
  });

  it("refuses another node's token (403), an admin token (403) and no token (401), as the other agent endpoints", async () => {
    const other = await peersOf("gb-b", tokens["gb-a"]);
    expect(other.status).toBe(403);
    expect(other.json).toMatchObject({ code: "forbidden", detail: "this node token belongs to node gb-a, not gb-b" });
    const admin = await t.admin("GET", "/api/v1/agents/gb-b/nvlink-peers");
    expect(admin.status).toBe(403);
    expect((await t.call("GET", "/api/v1/agents/gb-b/nvlink-peers")).status).toBe(401);
  });

  it("is in the OpenAPI document with its operation id, tag and example", async () => {
    const doc = (await t.call("GET", "/openapi.json")).json;
    const op = doc.paths["/api/v1/agents/{node}/nvlink-peers"].get;
    expect(op).toMatchObject({ operationId: "getNvlinkPeers", tags: ["agents"], security: [{ nodeToken: [] }] });
    expect(op.description).toMatch(/GET \/api\/v1\/nvlink/);
    expect(doc.components.schemas.NvlinkPeers.properties.addresses.example).toEqual([
      "10.0.0.11",
      "10.0.0.12",
      "10.0.0.13",
    ]);
  });
});

describe("the heartbeat's imexConfig", () => {
  it("is accepted, and leaves the stored inventory as it was", async () => {
    const before = (await t.admin("GET", "/api/v1/nodes/gb-a")).json.inventory;
    const imexConfig = { digest: await imexConfigDigest(["10.0.0.11", "10.0.0.12", "10.0.0.14"]), addresses: 3 };
    const hb = await t.call("POST", "/api/v1/agents/gb-a/heartbeat", { token: tokens["gb-a"], body: { imexConfig } });
    expect(hb.status, JSON.stringify(hb.json)).toBe(200);
    expect((await t.admin("GET", "/api/v1/nodes/gb-a")).json.inventory).toEqual(before);
  });

  it("is refused 400 when it is not a SHA-256 and a count", async () => {
    const hb = await t.call("POST", "/api/v1/agents/gb-a/heartbeat", {
      token: tokens["gb-a"],
      body: { imexConfig: { digest: "not-a-digest", addresses: 3 } },
    });
    expect(hb.status).toBe(400);
    expect(hb.json.errors[0].path).toBe("imexConfig.digest");
  });
});
