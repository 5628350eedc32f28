// A control plane with no row for an engine a node runs (restored from an older backup): the agent's poll with an
// index the control plane never gave is told to register again, and the engines it reports are adopted as replicas.
import { afterEach, describe, expect, it } from "vitest";
import { nodeAssignIndex } from "../../api/db/schema.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";

const apps: TestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

const MODEL = {
  weightsPath: "/models/llama-3.1-70b",
  profiles: [{ name: "tp4", engine: "vllm", gpuClass: "h100-80g", tp: 4, gpusPerNode: 4 }],
};

/** A control plane with the model and `replicas` of deployment chat declared, and node hgx-1 registered. */
async function controlPlane(replicas: number, running: { spec: StartShard; state?: string }[] = [], model = MODEL) {
  const t = await createTestApp();
  apps.push(t);
  await t.admin("PUT", "/api/v1/models/llama-70b", { body: { spec: model } });
  await t.admin("PUT", "/api/v1/deployments/chat", { body: { spec: { model: "llama-70b", replicas, pool: "prod" } } });
  const reg = await t.call("POST", "/api/v1/agents/register", {
    token: t.adminToken,
    body: {
      ...registerBody("hgx-1", nodeInventory("hgx-1")),
      labels: { pool: "prod" },
      runningShards: running.map(({ spec, state = "ready" }) => ({
        shardId: spec.shardId,
        replicaId: spec.replicaId,
        rank: spec.rank,
        state,
        fingerprint: spec.fingerprint,
        httpPort: spec.httpPort,
        pid: 4242,
        spec,
      })),
    },
  });
  expect(reg.status).toBe(201);
  const token = reg.json.nodeToken as string;
  const poll = (query = "") => t.call("GET", `/api/v1/agents/hgx-1/assignments${query}`, { token });
  return { t, poll, token };
}

/** What the first control plane told the agent to run: two replicas of chat. */
async function firstSpecs() {
  const first = await controlPlane(2);
  const r = await first.poll();
  return { index: r.json.index as number, shards: r.json.shards as StartShard[] };
}

describe("adopting running engines after a restore", () => {
  it("answers a poll or a report with an index it never gave 409 state_behind, writing nothing", async () => {
    const { index } = await firstSpecs();
    const restored = await controlPlane(2);
    const r = await restored.poll(`?index=${index + 5}&wait=1`);
    expect(r.status).toBe(409);
    expect(r.json).toMatchObject({ code: "state_behind", status: 409 });
    expect(r.json.detail).toMatch(/register again to report the running engines/);
    const before = (await restored.t.admin("GET", "/api/v1/nodes/hgx-1")).json;
    const hb = await restored.t.call("POST", "/api/v1/agents/hgx-1/heartbeat", {
      token: restored.token,
      headers: { "x-llmgw-index": String(index + 5) },
      body: { memoryAvailableMiB: 1 },
    });
    expect(hb.status).toBe(409);
    expect(hb.json.code).toBe("state_behind");
    expect((await restored.t.admin("GET", "/api/v1/nodes/hgx-1")).json).toEqual(before);
    // an index it gave is fine
    const current = (await restored.poll()).json.index as number;
    expect((await restored.poll(`?index=${current}`)).status).toBe(200);
  });

  it("answers a poll waiting while the database is replaced by an older one 409 state_behind, without waiting it out", async () => {
    const cp = await controlPlane(1);
    const { index } = (await cp.poll()).json;
    const began = Date.now();
    const waiting = cp.poll(`?index=${index}&wait=50`);
    // what a restore does to the node's row: an index from before
    await cp.t.db.update(nodeAssignIndex).set({ assignIndex: index - 1 });
    const r = await waiting;
    expect(Date.now() - began).toBeLessThan(45_000); // woken by the poll hub, not by the end of its 50 s wait
    expect([r.status, r.json.code]).toEqual([409, "state_behind"]);
  });

  it("adopts the reported engines with their ids, devices and ports, and serves them", async () => {
    const { shards } = await firstSpecs();
    const restored = await controlPlane(
      2,
      shards.map((spec) => ({ spec })),
    );
    const r = await restored.poll();
    expect(r.status).toBe(200);
    const got = r.json.shards as StartShard[];
    expect(got.map((s) => [s.shardId, s.deviceIds, s.httpPort, s.fingerprint])).toEqual(
      shards.map((s) => [s.shardId, s.deviceIds, s.httpPort, s.fingerprint]),
    );
    const replicas = (await restored.t.admin("GET", "/api/v1/replicas")).json.items as {
      id: string;
      state: string;
      endpoint: string | null;
    }[];
    expect(replicas.map((x) => [x.id, x.state])).toEqual(shards.map((s) => [s.replicaId, "ready"]));
    expect(replicas.every((x) => x.endpoint)).toBe(true);
    const events = (await restored.t.admin("GET", "/api/v1/events?type=replica_adopted")).json.items;
    expect(events).toHaveLength(2);
  });

  it("gives a new replica an id past the adopted one's", async () => {
    const { shards } = await firstSpecs();
    const restored = await controlPlane(2, [{ spec: shards[1]! }]);
    const ids = ((await restored.poll()).json.shards as StartShard[]).map((s) => s.replicaId);
    const seq = Number(shards[1]!.replicaId.slice(1));
    expect(ids).toEqual([shards[1]!.replicaId, `r${seq + 1}`]);
  });

  it("refuses an engine whose profile changed: it is left to stop, and says why", async () => {
    const { shards } = await firstSpecs();
    const changed = { ...MODEL, profiles: [{ ...MODEL.profiles[0]!, args: ["--enforce-eager"] }] };
    const restored = await controlPlane(1, [{ spec: shards[0]! }], changed);
    const r = await restored.poll();
    // the deployment gets a new replica with a new id (the old engine's is never reused), on any devices
    expect((r.json.shards as StartShard[]).map((s) => s.shardId)).toEqual([
      `r${Number(shards[0]!.replicaId.slice(1)) + 1}-s0`,
    ]);
    const events = (await restored.t.admin("GET", "/api/v1/events?type=shard_not_adopted")).json.items;
    expect(events.map((e: { message: string }) => e.message)).toEqual([
      `shard ${shards[0]!.shardId} running on hgx-1 is not adopted (profile tp4 changed since the engine started); its agent stops it`,
    ]);
  });
});
