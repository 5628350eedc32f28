import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newPlacementCache, readPlacementRows } from "../../api/placement/rows.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { GB200_XML, H100_XML, inventoryFromCapture, migInventory, registerBody } from "../helpers/inventory.js";

let t: TestApp;
let token: string;
const inv = inventoryFromCapture(H100_XML);
const poll = () => t.call("GET", "/api/v1/agents/n1/assignments", { token });
const heartbeat = (problems: string[]) =>
  t.call("POST", "/api/v1/agents/n1/heartbeat", {
    token,
    body: { gpus: inv.gpus.map((g) => ({ uuid: g.uuid, health: { ...g.health, problems } })) },
  });

beforeAll(async () => {
  t = await createTestApp();
  token = (
    await t.call("POST", "/api/v1/agents/register", {
      token: t.adminToken,
      body: { ...registerBody("n1", inv), labels: { pool: "p" } },
    })
  ).json.nodeToken;
  await t.admin("PUT", "/api/v1/models/m", {
    body: { spec: { weightsPath: "/m", profiles: [{ name: "one", engine: "vllm", gpuClass: "h100-80g" }] } },
  });
  await poll(); // placement has seen (and kept) the node's inventory
});
afterAll(() => t.close());

describe("placement and a node's changing inventory", () => {
  it("sees what a heartbeat changed: unhealthy cards are not placed on, healthy again they are", async () => {
    expect((await heartbeat(["in use by another process: python (pid 4242)"])).status).toBe(200);
    await t.admin("PUT", "/api/v1/deployments/d", { body: { spec: { model: "m", replicas: 1, pool: "p" } } });
    await t.settle();
    expect((await poll()).json.shards).toEqual([]);
    expect((await t.admin("GET", "/api/v1/deployments/d")).json.status.pending[0].reason).toContain(
      "in use by another process",
    );
    await heartbeat([]);
    await t.settle();
    expect((await poll()).json.shards).toHaveLength(1);
  });
});

describe("a process on one MIG instance", () => {
  it("makes that instance alone unavailable: the card's other instances are placed on, and the plan says why", async () => {
    const u = await createTestApp();
    const inventory = migInventory("mig1", "smi-xml/CRAFTED-a100-mig-process-on-one-instance.xml");
    const reg = await u.call("POST", "/api/v1/agents/register", {
      token: u.adminToken,
      body: { ...registerBody("mig1", inventory), labels: { pool: "p" } },
    });
    expect(reg.status).toBe(201);
    const cls = "a100-80g-mig-1g.20gb";
    const plan = (await u.admin("GET", "/api/v1/plan")).json.classes.find((c: { class: string }) => c.class === cls);
    expect(plan).toMatchObject({
      total: 4,
      free: 3,
      unavailable: [{ count: 1, reason: "in use by another process: python3 (pid 4242)" }],
    });
    await u.admin("PUT", "/api/v1/models/small", {
      body: { spec: { weightsPath: "/m", profiles: [{ name: "mig", engine: "vllm", gpuClass: cls }] } },
    });
    await u.admin("PUT", "/api/v1/deployments/small", { body: { spec: { model: "small", replicas: 4, pool: "p" } } });
    await u.settle();
    const placed = async () =>
      ((await u.admin("GET", "/api/v1/replicas")).json.items as { shards: { devices: string[] }[] }[])
        .map((r) => r.shards[0]!.devices[0])
        .sort();
    expect(await placed()).toEqual(["0/mig1", "0/mig2", "0/mig3"]);
    // the process goes away: the heartbeat clears the instance's problem, and placement uses it at once
    const hb = await u.call("POST", "/api/v1/agents/mig1/heartbeat", {
      token: reg.json.nodeToken,
      body: { gpus: [{ uuid: inventory.gpus[0]!.uuid, migProblems: { "0": [] } }] },
    });
    expect(hb.status).toBe(200);
    await u.call("GET", "/api/v1/agents/mig1/assignments", { token: reg.json.nodeToken });
    await u.settle();
    expect(await placed()).toEqual(["0/mig0", "0/mig1", "0/mig2", "0/mig3"]);
    await u.close();
  });
});

describe("placement's facts cache and a node registered again after it was deleted", () => {
  it("reads the new inventory, though its version starts over at 1 (another instance never saw the gap)", async () => {
    const u = await createTestApp();
    const reg = (xml: string) =>
      u.call("POST", "/api/v1/agents/register", {
        token: u.adminToken,
        body: { ...registerBody("n2", inventoryFromCapture(xml)), labels: { pool: "p" } },
      });
    const otherInstance = newPlacementCache();
    const classes = async () =>
      (await readPlacementRows(u.store.db, otherInstance, 0)).nodes
        .find((n) => n.id === "n2")!
        .facts.devices.map((d) => d.class);
    await reg(GB200_XML);
    expect(new Set(await classes())).toEqual(new Set(["gb200-185g"]));
    expect((await u.admin("DELETE", "/api/v1/nodes/n2")).status).toBe(204);
    u.clock.advance(1000);
    await reg(H100_XML);
    expect(new Set(await classes())).toEqual(new Set(["h100-80g"]));
    await u.close();
  });
});
