// A heartbeat's readings (memory in use, utilization, temperature, power, processes) as the control plane keeps them:
// shown with the node at once, without rewriting its inventory or telling placement, while a heartbeat that changes
// anything else (a card's problems, its fabric, IMEX, a port) is applied to the inventory with the readings so far.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readGeneration } from "../../api/db/cluster.js";
import { nodes } from "../../api/db/schema.js";
import type { Heartbeat } from "../../shared/schemas/agent.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { GB200_XML, H100_XML, inventoryFromCapture, registerBody } from "../helpers/inventory.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function register(id: string, inventory: Inventory, token = t.adminToken) {
  const r = await t.call("POST", "/api/v1/agents/register", { token, body: registerBody(id, inventory) });
  expect(r.status, r.text).toBeLessThan(300);
  return r.json.nodeToken as string;
}
const beat = (id: string, token: string, body: Heartbeat) =>
  t.call("POST", `/api/v1/agents/${id}/heartbeat`, { token, body });
const row = async (id: string) => (await t.db.select().from(nodes).where(eq(nodes.id, id)))[0]!;
const shown = async (id: string) => (await t.admin("GET", `/api/v1/nodes/${id}`)).json.inventory as Inventory;

/** Every card's heartbeat entry as the agent sends it, with readings that differ by `k`. */
const cards = (inv: Inventory, k: number) =>
  inv.gpus.map((g) => ({
    uuid: g.uuid,
    memoryUsedMiB: 1000 * k + g.index,
    utilizationPercent: k,
    health: { ...g.health, temperatureC: 30 + k, powerDrawW: 100 + k, processes: [] },
  }));

describe("a heartbeat's readings", () => {
  it("are shown at once, while the inventory, its change index and the generation stay as they were", async () => {
    const inv = inventoryFromCapture(H100_XML);
    const token = await register("r-1", inv);
    expect((await beat("r-1", token, { gpus: cards(inv, 1), memoryAvailableMiB: 500 })).status).toBe(200);
    const [stored, gen] = [await row("r-1"), await readGeneration(t.db)];

    const r = await beat("r-1", token, { gpus: cards(inv, 2), memoryAvailableMiB: 400 });
    expect(r.status, r.text).toBe(200);
    const after = await row("r-1");
    expect(after.inventory).toBe(stored.inventory);
    expect([after.inventoryVersion, after.rev]).toEqual([stored.inventoryVersion, stored.rev]);
    expect(await readGeneration(t.db)).toBe(gen);
    const view = await shown("r-1");
    expect(view.gpus.map((g) => g.memoryUsedMiB)).toEqual(inv.gpus.map((g) => 2000 + g.index));
    expect(view.gpus[3]).toMatchObject({ utilizationPercent: 2, health: { temperatureC: 32, powerDrawW: 102 } });
    expect(view.gpus[3]!.health.problems).toEqual(inv.gpus[3]!.health.problems);
    expect(view.memory.availableMiB).toBe(400);
    expect(after.lastHeartbeatAt).toBe(t.clock.now());
  });

  it("left out of a heartbeat keep their last values", async () => {
    const inv = inventoryFromCapture(H100_XML);
    const token = await register("r-2", inv);
    await beat("r-2", token, { gpus: cards(inv, 1), memoryAvailableMiB: 500 });
    await beat("r-2", token, { gpus: cards(inv, 2), memoryAvailableMiB: 400 });
    // the same cards with the same facts, but only card 0 sends a reading, and no memory figure comes
    const gpus = cards(inv, 3).map(({ uuid, health }, i) => ({
      uuid,
      health: {
        ...inv.gpus[i]!.health,
        temperatureC: health.temperatureC,
        powerDrawW: health.powerDrawW,
        processes: [],
      },
      ...(i === 0 ? { memoryUsedMiB: 7 } : {}),
    }));
    const stored = await row("r-2");
    expect((await beat("r-2", token, { gpus })).status).toBe(200);
    const view = await shown("r-2");
    expect(view.gpus.map((g) => g.memoryUsedMiB)).toEqual(inv.gpus.map((g) => (g.index === 0 ? 7 : 2000 + g.index)));
    expect(view.memory.availableMiB).toBe(400);
    expect(view.gpus[1]).toMatchObject({ utilizationPercent: 2, health: { temperatureC: 33 } });
    expect((await row("r-2")).inventory).toBe(stored.inventory);
  });

  it("carry into the inventory when a heartbeat changes what placement reads, and that change reaches placement", async () => {
    const inv = inventoryFromCapture(H100_XML);
    const token = await register("r-3", inv);
    await beat("r-3", token, { gpus: cards(inv, 1) });
    await beat("r-3", token, { gpus: cards(inv, 2), memoryAvailableMiB: 400 });
    const [stored, gen] = [await row("r-3"), await readGeneration(t.db)];
    const sick = cards(inv, 2).map((c, i) =>
      i === 5 ? { ...c, health: { ...c.health, problems: ["XID 79: fallen off the bus"] } } : c,
    );
    expect((await beat("r-3", token, { gpus: sick })).status).toBe(200);
    const after = await row("r-3");
    expect(after.rev).toBeGreaterThan(stored.rev);
    expect(await readGeneration(t.db)).toBeGreaterThan(gen);
    const written = JSON.parse(after.inventory) as Inventory;
    expect(written.gpus[5]!.health.problems).toEqual(["XID 79: fallen off the bus"]);
    expect(written.gpus.map((g) => g.memoryUsedMiB)).toEqual(inv.gpus.map((g) => 2000 + g.index));
    expect(written.memory.availableMiB).toBe(400);
    expect(await shown("r-3")).toEqual(written);
  });

  it("do not move placement, nor does a change of a health fact placement does not read", async () => {
    const inv = inventoryFromCapture(GB200_XML);
    const token = await register("r-4", inv);
    await beat("r-4", token, { gpus: cards(inv, 1) });
    const [stored, gen] = [await row("r-4"), await readGeneration(t.db)];
    const busy = cards(inv, 9).map((c) => ({
      ...c,
      health: { ...c.health, processes: [{ pid: 4242, name: "vllm", usedMemoryMiB: 70_000 }] },
    }));
    expect((await beat("r-4", token, { gpus: busy })).status).toBe(200);
    expect((await shown("r-4")).gpus[0]!.health).toMatchObject({ temperatureC: 39, processes: [{ pid: 4242 }] });
    // an uncorrectable ECC error counted since the card was installed: shown, but placement reads only problems
    const counted = busy.map((c) => ({ ...c, health: { ...c.health, eccUncorrectableAggregate: 1 } }));
    expect((await beat("r-4", token, { gpus: counted })).status).toBe(200);
    const after = await row("r-4");
    expect(after.inventoryVersion).toBeGreaterThan(stored.inventoryVersion);
    expect((JSON.parse(after.inventory) as Inventory).gpus[2]!.health.eccUncorrectableAggregate).toBe(1);
    expect(after.rev).toBe(stored.rev);
    expect(await readGeneration(t.db)).toBe(gen);
  });

  it("are dropped by a registration, and the next heartbeat is checked against the new inventory", async () => {
    const h100 = inventoryFromCapture(H100_XML);
    const token = await register("r-5", h100);
    await beat("r-5", token, { gpus: cards(h100, 1) });
    await beat("r-5", token, { gpus: cards(h100, 2) });
    // the node comes back with other cards: the same heartbeat as before now names GPUs it does not have
    const tray = inventoryFromCapture(GB200_XML);
    await register("r-5", tray, token);
    expect(await shown("r-5")).toEqual(tray);
    const r = await beat("r-5", token, { gpus: cards(h100, 2) });
    expect(r.status).toBe(409);
    expect(await shown("r-5")).toEqual(tray);
  });
});
