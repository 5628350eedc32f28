// Placement holds the ports an engine binds itself in port_allocations and hands them to the agent (StartShard).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { portAllocations } from "../../api/db/schema.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";

let t: TestApp;
let token = "";

beforeAll(async () => {
  t = await createTestApp();
  const inv = nodeInventory("hgx-1");
  const r = await t.call("POST", "/api/v1/agents/register", {
    token: t.adminToken,
    body: registerBody("hgx-1", { ...inv, engines: { ...inv.engines, versions: { sglang: "0.5.19" } } }),
  });
  token = r.json.nodeToken;
  const profile = { engine: "sglang", gpuClass: "h100-80g", tp: 4, gpusPerNode: 4 };
  await t.admin("PUT", "/api/v1/models/ds", {
    body: {
      spec: {
        weightsPath: "/models/ds",
        profiles: [{ name: "dp", ...profile, args: ["--enable-dp-attention", "--dp-size", "4"] }],
      },
    },
  });
  await t.admin("PUT", "/api/v1/deployments/ds", { body: { spec: { model: "ds", replicas: 2, pool: "prod" } } });
});
afterAll(() => t.close());

describe("engine ports", () => {
  it("sends each shard the ports its engine binds, and holds them so no other shard gets one", async () => {
    const r = await t.call("GET", "/api/v1/agents/hgx-1/assignments", { token });
    const d = await t.admin("GET", "/api/v1/deployments/ds");
    expect(d.json.status.pending).toEqual([]);
    const shards = r.json.shards as { shardId: string; httpPort: number; leaderPort: number; enginePorts: number[] }[];
    expect(shards).toHaveLength(2);
    for (const s of shards) expect(s.enginePorts).toEqual([1, 2, 3, 4, 5, 6, 13].map((o) => s.leaderPort + o));
    const held = await t.db.select().from(portAllocations);
    const want = shards.flatMap((s) =>
      [s.httpPort, s.leaderPort, ...s.enginePorts].map((port) => `${s.shardId}:${port}`),
    );
    expect(held.map((h) => `${h.shardId}:${h.port}`).sort()).toEqual(want.sort());
  });
});
