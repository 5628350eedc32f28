// The JSON log of a real `llmgw serve` as an on-call engineer reads it: registration, the API writes, placement (on the
// fleet thread), a node lost and its replica repaired onto another — each a line with the ids it concerns.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";
import { killAll, type Proc, startServe, until } from "../helpers/process.js";

const ADMIN = `llmgw_adm_${"serveLog".repeat(5)}`;
const tmp = tempDir();
let serve: Proc & { url: string };
const tokens = new Map<string, string>();

type Line = Record<string, unknown> & { level: string; msg: string; name: string };
const lines = (): Line[] =>
  serve
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);
const call = async (method: string, path: string, body?: unknown, token = ADMIN, requestId?: string) => {
  const res = await fetch(`${serve.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      ...(requestId ? { "x-request-id": requestId } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
};

beforeAll(async () => {
  serve = await startServe(["--db", `${tmp.dir}/log.db`], {
    env: {
      LLMGW_ADMIN_TOKEN: ADMIN,
      LLMGW_LOG_FORMAT: "json",
      LLMGW_NODE_LOST_AFTER_S: "10",
      LLMGW_REPAIR_GRACE_S: "0",
      LLMGW_SWEEP_INTERVAL_S: "1",
    },
  });
}, 30_000);
afterAll(async () => {
  await killAll();
  tmp.cleanup();
});

describe("serve's log", () => {
  it("has a line with its ids for each step from registration to a repair", async () => {
    for (const id of ["gpu-a", "gpu-b"]) {
      const r = await call("POST", "/api/v1/agents/register", registerBody(id, nodeInventory(id)));
      expect(r.status).toBe(201);
      tokens.set(id, r.body.nodeToken);
    }
    await call("PUT", "/api/v1/models/m", {
      spec: {
        weightsPath: "/m",
        profiles: [{ name: "tp8", engine: "vllm", gpuClass: "h100-80g", tp: 8, gpusPerNode: 8 }],
      },
    });
    await call(
      "PUT",
      "/api/v1/deployments/chat",
      { spec: { model: "m", replicas: 1, pool: "prod" } },
      ADMIN,
      "drill-put-1",
    );
    let first = "";
    await until(async () => {
      const items = (await call("GET", "/api/v1/replicas?deployment=chat")).body.items;
      first = items[0]?.id ?? "";
      return !!first;
    });
    const [where] = (await call("GET", `/api/v1/replicas/${first}`)).body.shards.map(
      (s: { nodeId: string }) => s.nodeId,
    );
    const other = where === "gpu-a" ? "gpu-b" : "gpu-a";
    // the other node keeps reporting; the replica's node falls silent, is lost, and its replica moves
    await until(
      async () => {
        await call("POST", `/api/v1/agents/${other}/heartbeat`, {}, tokens.get(other));
        const items = (await call("GET", "/api/v1/replicas?deployment=chat")).body.items;
        return items.length === 1 && items[0].shards[0].nodeId === other;
      },
      40_000,
      "the replica re-placed on the other node",
    );

    const log = lines();
    expect(log.every((l) => l.name === "serve" && typeof l.time === "string" && typeof l.level === "string")).toBe(
      true,
    );
    expect(log.find((l) => l.event === "node_registered" && l.nodeId === where)).toMatchObject({
      level: "info",
      msg: `${where} registered with 8 GPUs in pool prod`,
      gpus: 8,
      classes: ["h100-80g"],
    });
    expect(log.find((l) => l.msg === "request" && l.route === "/api/v1/deployments/:name")).toMatchObject({
      requestId: "drill-put-1",
      method: "PUT",
      status: 201,
      token: "LLMGW_ADMIN_TOKEN",
    });
    const placed = log.filter((l) => typeof l.msg === "string" && l.msg.startsWith("placed replica"));
    expect(placed[0]).toMatchObject({ replicaId: first, deployment: "chat", nodeIds: [where], fabric: "single" });
    expect(log.find((l) => l.event === "node_lost")).toMatchObject({ nodeId: where, level: "info" });
    // placement runs on the fleet thread: its read of the fleet says so, and the events its transactions store (the
    // repair) are logged by the serving thread as its own are
    expect(log.find((l) => /^read \d+ nodes for placement in \d+ ms$/.test(l.msg))).toMatchObject({
      level: "info",
      thread: "fleet",
    });
    expect(log.find((l) => l.event === "replica_repaired")).toMatchObject({ replicaId: first, deployment: "chat" });
    expect(placed.at(-1)).toMatchObject({ deployment: "chat", nodeIds: [other] });
    expect(log.find((l) => l.msg === `released replica ${first}`)).toMatchObject({ replicaId: first });
    // a token never reaches the log
    expect(serve.output()).not.toContain(ADMIN);
    for (const t of tokens.values()) expect(serve.output()).not.toContain(t);
  }, 60_000);
});
