// Placement's read ahead on Node: the fleet read at start-up, then what changed every few seconds, so that a fleet
// that rewrote its facts (reconnecting after a restart) is read before a change needs it, not by the change's run.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readFleetAhead } from "../../api/placement/read-ahead.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { createTestApp, silentLog, type TestApp } from "../helpers/app.js";
import { H100_XML, inventoryFromCapture, registerBody } from "../helpers/inventory.js";

let t: TestApp;
let token = "";
const inv = inventoryFromCapture(H100_XML);

beforeAll(async () => {
  t = await createTestApp();
  const r = await t.call("POST", "/api/v1/agents/register", { token: t.adminToken, body: registerBody("n1", inv) });
  token = r.json.nodeToken;
});
afterAll(() => t.close());

describe("readFleetAhead", () => {
  it("reads the fleet at once, then a node's new facts without any placement run, until stopped", async () => {
    const cache = newPlacementCache();
    const stop = new AbortController();
    const said: string[] = [];
    const running = readFleetAhead(
      t.store.db,
      cache,
      { ...silentLog, info: (m) => void said.push(m) },
      stop.signal,
      20,
    );
    await vi.waitFor(() => expect(cache.nodes.has("n1")).toBe(true));
    expect(said).toEqual([expect.stringMatching(/^read 1 nodes for placement in \d+ ms$/)]);
    // a card with a problem: what placement derives from the node changes
    const problems = ["in use by another process: python (pid 1)"];
    const gpu = inv.gpus[0]!;
    const hb = await t.call("POST", "/api/v1/agents/n1/heartbeat", {
      token,
      body: { gpus: [{ uuid: gpu.uuid, health: { ...gpu.health, problems } }] },
    });
    expect(hb.status).toBe(200);
    await vi.waitFor(() => expect(cache.nodes.get("n1")?.facts.devices[0]?.problems).toEqual(problems), {
      timeout: 5_000,
    });
    stop.abort();
    await running;
  });
});
