// A two-node InfiniBand replica one of whose shards reports NCCL on sockets (the agents' reports as they send them):
// not served, freed and re-placed away from that node when another pair fits, kept and shown degraded when none
// does, and served as it is under `transport: prefer`.
import { afterEach, describe, expect, it } from "vitest";
import { readTable } from "../../api/router/table.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";

let t: TestApp;
const tokens = new Map<string, string>();
const HCAS = ["mlx5_0", "mlx5_1"];
const EXPECTED = "ib:ib-a (mlx5_0,mlx5_1)";
const SOCKET: ShardTransport = {
  verdict: "degraded",
  expected: EXPECTED,
  via: "NET/Socket",
  observed: "NET/Socket on eth0 (NCCL 2.27.5)",
  reason: `placed on ${EXPECTED}; NCCL uses NET/Socket on eth0`,
};
const OK: ShardTransport = { verdict: "ok", expected: EXPECTED, via: "NET/IB", observed: "NET/IB on mlx5_0, mlx5_1" };

/** An HGX node on IB fabric ib-a through two ACTIVE HCAs. */
function ibNode(id: string) {
  const inv = nodeInventory(id);
  return {
    ...inv,
    hcas: HCAS.map((name, i) => ({
      name,
      numaNode: i,
      ports: [{ port: 1, state: "ACTIVE", linkLayer: "InfiniBand", rateGbps: 400 }],
    })),
    fabrics: [{ fabric: "ib-a", hcas: HCAS }],
  };
}

const poll = (id: string) => t.call("GET", `/api/v1/agents/${id}/assignments`, { token: tokens.get(id) });
type Shard = { shardId: string; replicaId: string; nodeId: string };
/** Polls every node; the shards each holds now. */
async function shardsNow(ids: string[]): Promise<Shard[]> {
  const out: Shard[] = [];
  for (const id of ids) for (const s of (await poll(id)).json.shards) out.push({ ...s, nodeId: id });
  return out;
}
const report = (node: string, s: Shard, transport: ShardTransport) =>
  t.call("POST", `/api/v1/agents/${node}/status`, {
    token: tokens.get(node),
    body: { shards: [{ shardId: s.shardId, replicaId: s.replicaId, state: "ready", transport }] },
  });

async function setUp(nodes: string[], spec: Record<string, unknown>) {
  t = await createTestApp();
  for (const id of nodes) {
    const r = await t.call("POST", "/api/v1/agents/register", {
      token: t.adminToken,
      body: { ...registerBody(id, ibNode(id)), labels: { pool: "p" } },
    });
    tokens.set(id, r.json.nodeToken);
  }
  await t.admin("PUT", "/api/v1/models/big", {
    body: {
      spec: {
        weightsPath: "/m",
        profiles: [{ name: "2x8", engine: "vllm", gpuClass: "h100-80g", tp: 16, gpusPerNode: 8, nodes: 2 }],
      },
    },
  });
  await t.admin("PUT", "/api/v1/deployments/big", {
    body: { spec: { model: "big", replicas: 1, pool: "p", ...spec } },
  });
  const shards = await shardsNow(nodes);
  expect(shards).toHaveLength(2);
  expect(new Set(shards.map((s) => s.replicaId)).size).toBe(1);
  return shards;
}

/** Both shards ready, the second one's NCCL on sockets. */
async function degrade(shards: Shard[]) {
  await report(shards[0]!.nodeId, shards[0]!, OK);
  await report(shards[1]!.nodeId, shards[1]!, SOCKET);
}

const replicas = async () => (await t.admin("GET", "/api/v1/replicas?deployment=big")).json.items;
const served = async () => (await readTable(t.store.db, t.clock.now())).ready.get("big") ?? [];
const status = async () => (await t.admin("GET", "/api/v1/deployments/big")).json.status;

afterEach(() => t?.close());

describe("a replica whose NCCL is not on its placed transport", () => {
  it("is freed and re-placed away from the node that fell back when another pair fits", async () => {
    const shards = await setUp(["a", "b", "c"], {});
    const bad = shards[1]!.nodeId;
    await degrade(shards);
    const after = await shardsNow(["a", "b", "c"]);
    expect(after).toHaveLength(2);
    expect(after[0]!.replicaId).not.toBe(shards[0]!.replicaId);
    expect(after.map((s) => s.nodeId)).not.toContain(bad);
    const ev = await t.admin("GET", "/api/v1/events?type=replica_repaired");
    expect(ev.json.items[0].message).toBe(
      `replica ${shards[0]!.replicaId} freed for re-placement: placed on ${EXPECTED}; NCCL uses NET/Socket on eth0`,
    );
    expect(ev.json.items[0].data.failedOn).toEqual([bad]);
  });

  it("is re-placed when its report says degraded without a reason, in words made of what it saw", async () => {
    const shards = await setUp(["a", "b", "c"], {});
    await report(shards[0]!.nodeId, shards[0]!, OK);
    const { reason: _, ...silent } = SOCKET;
    await report(shards[1]!.nodeId, shards[1]!, silent);
    const after = await shardsNow(["a", "b", "c"]);
    expect(after.map((s) => s.nodeId)).not.toContain(shards[1]!.nodeId);
    const ev = await t.admin("GET", "/api/v1/events?type=replica_repaired");
    expect(ev.json.items[0].message).toBe(
      `replica ${shards[0]!.replicaId} freed for re-placement: placed on ${EXPECTED}; NCCL uses NET/Socket on eth0 (NCCL 2.27.5)`,
    );
  });

  it("is kept, not served and shown degraded with the reason when no other pair fits", async () => {
    const shards = await setUp(["a", "b"], {});
    await degrade(shards);
    const after = await shardsNow(["a", "b"]);
    expect(after.map((s) => s.shardId).sort()).toEqual(shards.map((s) => s.shardId).sort());
    const [r] = await replicas();
    expect(r.state).toBe("degraded");
    const bad = r.shards.find((s: Shard) => s.nodeId === shards[1]!.nodeId);
    expect(bad.transport).toEqual(SOCKET);
    expect(await served()).toEqual([]);
    const table = await readTable(t.store.db, t.clock.now());
    expect(table.declared.get("big")).toBe(`replica ${r.id} is not served: ${SOCKET.reason}`);
    expect(await status()).toMatchObject({ phase: "Starting", placed: 1, ready: 0 });
  });

  it("stays degraded when its agent registers again (a restart), its running engines carrying the verdict", async () => {
    const shards = await setUp(["a", "b"], {});
    await degrade(shards);
    const bad = shards[1]!;
    const again = await t.call("POST", "/api/v1/agents/register", {
      token: tokens.get(bad.nodeId),
      body: {
        ...registerBody(bad.nodeId, ibNode(bad.nodeId)),
        labels: { pool: "p" },
        runningShards: [
          {
            shardId: bad.shardId,
            replicaId: bad.replicaId,
            rank: 1,
            state: "ready",
            fingerprint: "f",
            transport: SOCKET,
          },
        ],
      },
    });
    expect(again.status).toBe(200);
    expect((await replicas())[0].state).toBe("degraded");
    expect(await served()).toEqual([]);
  });

  it("is served as it is under transport: prefer", async () => {
    const shards = await setUp(["a", "b", "c"], { transport: "prefer" });
    await degrade(shards);
    const after = await shardsNow(["a", "b", "c"]);
    expect(after.map((s) => s.replicaId)).toEqual(shards.map((s) => s.replicaId));
    expect((await replicas())[0].state).toBe("degraded");
    expect((await served()).map((e) => e.replicaId)).toEqual([shards[0]!.replicaId]);
    expect(await status()).toMatchObject({ phase: "Ready", ready: 1 });
  });

  it("serves once every shard reports the transport it was placed for", async () => {
    const shards = await setUp(["a", "b"], {});
    await report(shards[0]!.nodeId, shards[0]!, OK);
    await report(shards[1]!.nodeId, shards[1]!, OK);
    expect((await replicas())[0].state).toBe("ready");
    expect((await served()).map((e) => e.replicaId)).toEqual([shards[0]!.replicaId]);
  });
});
