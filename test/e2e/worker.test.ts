// api/worker.ts in workerd (`wrangler dev` from the pinned wrangler) on a real libSQL server: it starts (nothing at
// module scope), serves the control API, the agents' endpoints with a long-poll inside Cloudflare's subrequest budget,
// the cron sweep, the console, /docs, the router with the same tests as the Node router, and /metrics.
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POLL_RESERVED_SUBREQUESTS } from "../../api/config.js";
import { tempDir } from "../helpers/db.js";
import { registerBody } from "../helpers/inventory.js";
import { until } from "../helpers/process.js";
import {
  failsOverBeforeTheFirstByte,
  metric,
  refusesBadRequests,
  refusesModelsNotAllowed,
  servesChat,
} from "../helpers/router-cases.js";
import { startWorkerStack, type WorkerStack } from "../helpers/worker.js";

const BUDGET = 40;
const WAIT_S = 10;
let w: WorkerStack;
const tmp = tempDir();

beforeAll(async () => {
  w = await startWorkerStack({
    LLMGW_POLL_WAIT_S: String(WAIT_S),
    LLMGW_WORKER_SUBREQUESTS: String(BUDGET),
    LLMGW_ROUTER_MAX_REQUEST_BYTES: "100000",
  });
}, 120_000);
afterAll(async () => {
  await w?.close();
  tmp.cleanup();
});

/** Registers `nodeId` (labelled `for: <nodeId>`) with a join token; returns its node token. */
async function register(nodeId: string): Promise<string> {
  const join = await w.api("POST", "/api/v1/join-tokens", { name: nodeId });
  const reg = await w.api(
    "POST",
    "/api/v1/agents/register",
    { ...registerBody(nodeId), labels: { pool: "prod", for: nodeId } },
    join.body.token,
  );
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  return reg.body.nodeToken as string;
}

describe("the Worker in workerd", () => {
  it("starts and answers /healthz, /readyz, the console's login page and /docs with its script", async () => {
    expect((await w.api("GET", "/healthz")).body).toMatchObject({ status: "ok" });
    expect((await w.api("GET", "/readyz")).body).toEqual({
      status: "ready",
      checks: { database: "ok", migrations: "current" },
    });
    const login = await fetch(`${w.url}/admin/login`);
    expect(login.status).toBe(200);
    expect(await login.text()).toContain("Admin token");
    expect(await (await fetch(`${w.url}/docs`)).text()).toContain('<script src="/docs/api-reference.js">');
    const script = await fetch(`${w.url}/docs/api-reference.js`);
    expect(script.status).toBe(200);
    expect(await script.text()).toContain("createApiReference");
    expect(w.wrangler.output()).not.toMatch(/Disallowed operation called within global scope/);
  });

  it("registers a node, takes its heartbeat, and shows it in nodes, nvlink and plan", async () => {
    const token = await register("wk-node-1");
    const hb = await w.api("POST", "/api/v1/agents/wk-node-1/heartbeat", {}, token);
    expect(hb.status, JSON.stringify(hb.body)).toBeLessThan(300);
    expect((await w.api("GET", "/api/v1/nodes/wk-node-1")).body).toMatchObject({ id: "wk-node-1", state: "ready" });
    const nvlink = await w.api("GET", "/api/v1/nvlink");
    expect(nvlink.status).toBe(200);
    expect(nvlink.body.domains).toEqual([]);
    const plan = await w.api("GET", "/api/v1/plan");
    expect(plan.status).toBe(200);
    expect(plan.body.classes.find((c: { class: string }) => c.class === "h100-80g")).toMatchObject({
      total: 8,
      free: 8,
    });
  });

  it("wakes a long-poll when a deployment is PUT", async () => {
    const token = await register("wk-poll");
    const poll = (index: number, wait: number) =>
      w.api("GET", `/api/v1/agents/wk-poll/assignments?index=${index}&wait=${wait}`, undefined, token);
    const first = await poll(0, 0);
    expect(first.body.shards).toEqual([]);
    const t0 = Date.now();
    const waiting = poll(first.body.index, WAIT_S);
    await new Promise((r) => setTimeout(r, 1500));
    await w.api("PUT", "/api/v1/models/wk-model", {
      spec: { weightsPath: "/models/x", profiles: [{ name: "one", engine: "vllm", gpuClass: "h100-80g" }] },
    });
    await w.api("PUT", "/api/v1/deployments/wk-dep", {
      spec: { model: "wk-model", replicas: 1, pool: "prod", nodeSelector: { for: "wk-poll" } },
    });
    const woken = await waiting;
    expect(woken.status).toBe(200);
    expect(woken.body.index).toBeGreaterThan(first.body.index);
    expect(woken.body.shards).toHaveLength(1);
    // woken by the change, not by the end of the wait
    expect(Date.now() - t0).toBeLessThan((WAIT_S - 2) * 1000);
  });

  it("keeps a long-poll that waits it out within LLMGW_WORKER_SUBREQUESTS, and what it does besides waiting within the reserve", async () => {
    const token = await register("wk-budget");
    const poll = (index: number, wait: number) =>
      w.api("GET", `/api/v1/agents/wk-budget/assignments?index=${index}&wait=${wait}`, undefined, token);
    const { index } = (await poll(0, 0)).body;
    const before = w.subrequests();
    await poll(index, 0);
    const fixed = w.subrequests() - before;
    const t0 = Date.now();
    const waited = await poll(index, WAIT_S);
    expect(Date.now() - t0).toBeGreaterThanOrEqual((WAIT_S - 1) * 1000);
    expect(waited.body.index).toBe(index);
    const total = w.subrequests() - before - fixed;
    console.log(
      `worker long-poll: ${fixed} subrequests without waiting, ${total} for a ${WAIT_S} s wait (budget ${BUDGET}, reserve ${POLL_RESERVED_SUBREQUESTS})`,
    );
    expect(fixed).toBeLessThanOrEqual(POLL_RESERVED_SUBREQUESTS);
    expect(total).toBeLessThanOrEqual(BUDGET);
    // it did re-read the node's row while it waited: once a second here
    expect(total - fixed).toBeGreaterThanOrEqual(WAIT_S - 2);
  }, 30_000);

  it("counts the subrequests of a declaration and the placement it starts", async () => {
    /** Subrequests of one PUT and the placement it runs after its response (waitUntil), counted once they stop. */
    const placed = async (replicas: number) => {
      const before = w.subrequests();
      await w.api("PUT", "/api/v1/deployments/wk-dep", {
        spec: { model: "wk-model", replicas, pool: "prod", nodeSelector: { for: "wk-poll" } },
      });
      let seen = -1;
      let still = 0;
      await until(
        async () => (seen === (seen = w.subrequests()) ? ++still : (still = 0)) >= 5,
        10_000,
        "the writes to stop",
      );
      const used = seen - before;
      expect(
        (await w.api("GET", "/api/v1/replicas")).body.items.filter(
          (r: { deployment: string }) => r.deployment === "wk-dep",
        ),
      ).toHaveLength(replicas);
      return used;
    };
    const one = await placed(2);
    const four = await placed(6);
    console.log(
      `worker PUT of a deployment and its placement: ${one} subrequests for one more replica, ${four} for four more`,
    );
    expect(one).toBeLessThanOrEqual(POLL_RESERVED_SUBREQUESTS);
    // the new rows go in a few multi-row statements: more replicas, not more subrequests
    expect(four).toBeLessThanOrEqual(one + 2);
  });

  it("runs the liveness sweep from its cron trigger", async () => {
    await register("wk-silent");
    await w.db.execute({
      sql: "UPDATE nodes SET last_seen_at = ? WHERE id = ?",
      args: [Date.now() - 400_000, "wk-silent"],
    });
    expect((await w.api("GET", "/api/v1/nodes/wk-silent")).body.state).toBe("lost");
    expect(
      (await w.api("GET", "/api/v1/events?node=wk-silent")).body.items.map((e: { type: string }) => e.type),
    ).not.toContain("node_lost");
    const cron = await fetch(`${w.url}/__scheduled?cron=${encodeURIComponent("* * * * *")}`);
    expect(cron.status).toBe(200);
    await until(
      async () =>
        (await w.api("GET", "/api/v1/events?node=wk-silent")).body.items.some(
          (e: { type: string }) => e.type === "node_lost",
        ),
      10_000,
      "the sweep's node_lost event",
    );
  });
});

describe("the Worker's router", () => {
  let key = "";
  let chat: Awaited<ReturnType<WorkerStack["replicas"]>>;
  beforeAll(async () => {
    key = await w.key("all");
    chat = await w.replicas("chat", 2);
  }, 60_000);

  it("serves chat (JSON and streamed) and embeddings to the openai SDK, and lists the model", () =>
    servesChat(w.url, key));
  it("answers bad requests in OpenAI's error shape", () => refusesBadRequests(w.url, key));
  it("enforces API keys' allow-lists (403)", async () =>
    refusesModelsNotAllowed(w.url, await w.key("narrow", { models: ["other"] })));

  it("counts token usage per key and model (written after each response)", async () => {
    await until(
      async () => (await w.api("GET", "/api/v1/usage?key=all&model=chat")).body.totals.completionTokens >= 3 + 4 + 2,
      10_000,
      "usage written",
    );
    expect((await w.api("GET", "/api/v1/usage?key=all&model=chat")).body.totals.promptTokens).toBeGreaterThan(0);
  });

  it("fails over to another replica when one refuses connections before the first byte", async () => {
    chat[0]!.proc.child.kill("SIGKILL");
    await chat[0]!.proc.exited;
    await failsOverBeforeTheFirstByte(w.url, key);
  });

  it("serves /metrics: cluster gauges from the database and this isolate's router counters, valid for promtool", async () => {
    const r = await fetch(`${w.url}/metrics`);
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toMatch(/^llmgw_nodes\{state="ready"\} [1-9]\d*$/m);
    expect(text).toMatch(/^llmgw_devices\{class="h100-80g",state="used"\} [1-9]\d*$/m);
    expect(text).toContain("llmgw_cluster_metrics_up 1");
    expect(await metric(w.url, "llmgw_router_requests_total", 'model="chat",code="200"')).toBeGreaterThan(0);
    expect(text).toMatch(/^llmgw_router_time_to_first_byte_seconds_count\{model="chat"\} [1-9]\d*$/m);
    if (spawnSync("promtool", ["--version"]).status === 0 || process.env.CI) {
      const file = join(tmp.dir, "metrics.txt");
      writeFileSync(file, text);
      expect(() => execFileSync("sh", ["-c", `promtool check metrics < ${file}`], { stdio: "pipe" })).not.toThrow();
    }
  });
});
