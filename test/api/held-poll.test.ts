// A long-poll over real HTTP (Node's server, as `llmgw serve` runs it) waits outside the request chain
// (api/routes/held-poll.ts): what it answers once woken is what an immediate poll answers — the same body, index and
// request id — its access line is written when it is answered (with that status and time), a failure while it waits
// is problem+json, and one whose client went away is logged as such.
import { EventEmitter } from "node:events";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Log } from "../../api/log.js";
import type { AssignmentWaiter } from "../../api/poll-hub.js";
import { CLIENT_GONE, holdAnswer, type Outgoing } from "../../api/routes/held-poll.js";
import { createTestApp, serveOverHttp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";
import { until } from "../helpers/process.js";

let t: TestApp;
let base: string;
let close: () => Promise<void>;
let token: string;
const lines: { msg: string; fields: Record<string, unknown> }[] = [];
const log: Log = {
  info: (msg, fields) => void lines.push({ msg, fields: (fields ?? {}) as Record<string, unknown> }),
  warn() {},
  error: (msg, fields) => void lines.push({ msg, fields: (fields ?? {}) as Record<string, unknown> }),
};
/** Node ids whose next wait fails (standing in for the database failing while a poll waits). */
const failing = new Set<string>();
const waiting = new Set<string>();

beforeAll(async () => {
  t = await createTestApp({
    log,
    wrapWaiter: (hub): AssignmentWaiter => ({
      ...hub,
      async wait(nodeId, index, ms, signal) {
        waiting.add(nodeId);
        let read: Awaited<ReturnType<AssignmentWaiter["wait"]>>;
        try {
          read = await hub.wait(nodeId, index, ms, signal);
        } finally {
          waiting.delete(nodeId);
        }
        if (failing.delete(nodeId)) throw new Error("disk I/O error (in the test)");
        return read;
      },
    }),
  });
  const served = await serveOverHttp(t);
  base = `http://127.0.0.1:${served.port}`;
  close = served.close;
  const r = await t.call("POST", "/api/v1/agents/register", {
    token: t.adminToken,
    body: { ...registerBody("held-1", nodeInventory("held-1")), labels: { pool: "prod" } },
  });
  expect(r.status).toBe(201);
  token = r.json.nodeToken;
  await t.admin("PUT", "/api/v1/models/llama-70b", {
    body: {
      spec: {
        weightsPath: "/models/llama-3.1-70b",
        profiles: [{ name: "tp4", engine: "vllm", gpuClass: "h100-80g", tp: 4, gpusPerNode: 4 }],
      },
    },
  });
});
afterAll(() => close());

const poll = (query = "", requestId?: string) =>
  fetch(`${base}/api/v1/agents/held-1/assignments${query}`, {
    headers: { authorization: `Bearer ${token}`, ...(requestId ? { "x-request-id": requestId } : {}) },
  });
const accessLine = (requestId: string) =>
  lines.find((l) => l.msg === "request" && l.fields.requestId === requestId)?.fields;

describe("a long-poll held over HTTP", () => {
  it("answers as an immediate poll does once woken, and logs its status and time when answered", async () => {
    const first = await poll();
    const index = Number(first.headers.get("x-llmgw-index"));
    const began = performance.now();
    const held = poll(`?index=${index}&wait=30`, "req_held_poll_1");
    await until(async () => waiting.has("held-1"), 5000);
    expect(accessLine("req_held_poll_1")).toBeUndefined(); // not answered yet, so not logged yet
    await t.admin("PUT", "/api/v1/deployments/chat", {
      body: { spec: { model: "llama-70b", replicas: 1, pool: "prod" } },
    });
    const woke = await held;
    const waitedMs = performance.now() - began;
    expect(woke.status).toBe(200);
    expect(woke.headers.get("content-type")).toBe("application/json");
    expect(woke.headers.get("x-request-id")).toBe("req_held_poll_1");
    const body = await woke.json();
    expect(Number(woke.headers.get("x-llmgw-index"))).toBe(body.index);
    expect(body.index).toBeGreaterThan(index);
    expect(body.shards).toHaveLength(1);
    // the same set an immediate poll is given
    const now = await poll();
    expect(await now.json()).toEqual(body);
    await until(async () => accessLine("req_held_poll_1") !== undefined, 5000);
    const line = accessLine("req_held_poll_1")!;
    expect(line).toMatchObject({
      method: "GET",
      status: 200,
      nodeId: "held-1",
      path: "/api/v1/agents/held-1/assignments",
    });
    expect(line.ms as number).toBeGreaterThan(0);
    expect(line.ms as number).toBeLessThanOrEqual(waitedMs + 1);
  });

  it("answers a failure while it waits as problem+json with its request id", async () => {
    const index = Number((await poll()).headers.get("x-llmgw-index"));
    failing.add("held-1");
    const r = await poll(`?index=${index}&wait=1`, "req_held_poll_2");
    expect(r.status).toBe(500);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.headers.get("x-request-id")).toBe("req_held_poll_2");
    expect(await r.json()).toMatchObject({ code: "internal", status: 500, requestId: "req_held_poll_2" });
    expect(lines.some((l) => l.msg === "unhandled error" && l.fields.requestId === "req_held_poll_2")).toBe(true);
    await until(async () => accessLine("req_held_poll_2")?.status === 500, 5000);
  });

  it("logs a poll whose client went away with 499, once its wait ended", async () => {
    const index = Number((await poll()).headers.get("x-llmgw-index"));
    const req = request(`${base}/api/v1/agents/held-1/assignments?index=${index}&wait=60`, {
      headers: { authorization: `Bearer ${token}`, "x-request-id": "req_held_poll_3" },
    });
    req.on("error", () => undefined);
    req.end();
    await until(async () => waiting.has("held-1"), 5000);
    req.destroy();
    await until(async () => accessLine("req_held_poll_3") !== undefined, 5000);
    expect(accessLine("req_held_poll_3")).toMatchObject({ status: 499, nodeId: "held-1" });
  });
});

describe("holdAnswer's signal", () => {
  /** A Node response as far as holdAnswer uses one: `close` comes when the test says. */
  const outgoing = () =>
    Object.assign(new EventEmitter(), {
      destroyed: false,
      writableEnded: false,
      writeHead() {},
      end() {
        this.writableEnded = true;
      },
    }) satisfies Outgoing;
  const quiet: Log = { info() {}, warn() {}, error() {} };

  it("aborts when the client goes away before the answer", async () => {
    const out = outgoing();
    let signal!: AbortSignal;
    const held = holdAnswer(out, "r1", quiet, (gone) => {
      signal = gone;
      return new Promise((ok) => gone.addEventListener("abort", () => ok({ status: 200, json: {} })));
    });
    out.destroyed = true;
    out.emit("close");
    expect(await held.answered).toBe(CLIENT_GONE);
    expect(signal.aborted).toBe(true);
  });

  it("does not abort on the close that follows the answer (every answered poll's)", async () => {
    const out = outgoing();
    let signal!: AbortSignal;
    const held = holdAnswer(out, "r2", quiet, async (gone) => {
      signal = gone;
      return { status: 200, json: { index: 1 } };
    });
    expect(await held.answered).toBe(200);
    out.emit("close");
    expect(signal.aborted).toBe(false);
  });
});
