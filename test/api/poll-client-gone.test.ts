// A long-poll whose agent goes away (its connection closed mid-wait) stops waiting at once, over real HTTP: its wait
// in the poll hub ends rather than holding its node's entry for up to a minute.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, serveOverHttp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";
import { until } from "../helpers/process.js";

let t: TestApp;
let port: number;
let close: () => Promise<void>;
const waits: { nodeId: string; signal?: AbortSignal; ended: boolean }[] = [];

beforeAll(async () => {
  t = await createTestApp({
    wrapWaiter: (hub) => ({
      ...hub,
      wait(nodeId, index, ms, signal) {
        const w = { nodeId, signal, ended: false };
        waits.push(w);
        return hub.wait(nodeId, index, ms, signal).finally(() => (w.ended = true));
      },
    }),
  });
  ({ port, close } = await serveOverHttp(t));
});
afterAll(() => close());

describe("a long-poll whose client went away", () => {
  it("ends its wait when the connection closes", async () => {
    const r = await t.call("POST", "/api/v1/agents/register", {
      token: t.adminToken,
      body: registerBody("gone-1", nodeInventory("gone-1")),
    });
    expect(r.status).toBe(201);
    const token = r.json.nodeToken as string;
    const first = await t.call("GET", "/api/v1/agents/gone-1/assignments", { token });
    const index = Number(first.headers.get("x-llmgw-index"));
    const req = request({
      host: "127.0.0.1",
      port,
      path: `/api/v1/agents/gone-1/assignments?index=${index}&wait=60`,
      headers: { authorization: `Bearer ${token}` },
    });
    req.on("error", () => undefined);
    req.end();
    await until(async () => waits.some((w) => w.nodeId === "gone-1"), 5000);
    const w = waits.find((x) => x.nodeId === "gone-1")!;
    expect(w.ended).toBe(false);
    req.destroy();
    await until(async () => w.ended, 5000);
    expect(w.signal?.aborted).toBe(true);
  });
});
