import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepLiveness } from "../../api/nodes/liveness.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";

let t: TestApp;
const tokens = new Map<string, string>();
const poll = (id: string) => t.call("GET", `/api/v1/agents/${id}/assignments`, { token: tokens.get(id) });
const placedOn = async (deployment: string) =>
  (
    (await t.admin("GET", `/api/v1/replicas?deployment=${deployment}`)).json.items as { shards: { nodeId: string }[] }[]
  ).map((r) => r.shards[0]!.nodeId);

beforeAll(async () => {
  t = await createTestApp({ settings: { nodeLostAfterS: 180, repairGraceS: 300 } });
  for (const id of ["a", "b"]) {
    const r = await t.call("POST", "/api/v1/agents/register", {
      token: t.adminToken,
      body: { ...registerBody(id, nodeInventory(id)), labels: { pool: "p", zone: id } },
    });
    tokens.set(id, r.json.nodeToken);
  }
  await t.admin("PUT", "/api/v1/models/m", {
    body: {
      spec: {
        weightsPath: "/m",
        profiles: [{ name: "tp8", engine: "vllm", gpuClass: "h100-80g", tp: 8, gpusPerNode: 8 }],
      },
    },
  });
});
afterAll(() => t.close());

describe("repair", () => {
  it("re-places a replica whose shard failed past its restart limit", async () => {
    await t.admin("PUT", "/api/v1/deployments/crashy", {
      body: { spec: { model: "m", replicas: 1, pool: "p", nodeSelector: { zone: "a" } } },
    });
    const first = await poll("a");
    const shard = first.json.shards[0];
    await t.call("POST", "/api/v1/agents/a/status", {
      token: tokens.get("a"),
      body: {
        shards: [
          { shardId: shard.shardId, replicaId: shard.replicaId, state: "failed", message: "exited 1, 5 restarts" },
        ],
      },
    });
    const next = await poll("a");
    expect(next.json.shards).toHaveLength(1);
    expect(next.json.shards[0].replicaId).not.toBe(shard.replicaId);
    const ev = await t.admin("GET", "/api/v1/events?type=replica_repaired");
    expect(ev.json.items[0].message).toBe(
      `replica ${shard.replicaId} freed for re-placement: a shard failed past its restart limit`,
    );
    await t.admin("DELETE", "/api/v1/deployments/crashy");
    await poll("a");
  });

  it("moves a lost node's replica to another node after the grace period, not before", async () => {
    await t.admin("PUT", "/api/v1/deployments/chat", { body: { spec: { model: "m", replicas: 1, pool: "p" } } });
    await poll("a");
    const [where] = await placedOn("chat");
    const other = where === "a" ? "b" : "a";
    t.clock.advance(200_000);
    await sweepLiveness(t.store, t.clock.now(), 180, 300);
    await poll(other);
    expect(await placedOn("chat")).toEqual([where]);
    t.clock.advance(290_000);
    await poll(other);
    await sweepLiveness(t.store, t.clock.now(), 180, 300);
    const moved = await poll(other);
    expect(moved.json.shards.map((s: { deployment: string }) => s.deployment)).toEqual(["chat"]);
    expect(await placedOn("chat")).toEqual([other]);
  });
});
