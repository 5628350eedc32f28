// Which status reports move the cluster generation (and so start a placement run): a shard that failed or whose
// transport is degraded always; a shard that is ready only where placement waits for it — a rolling replacement, a
// deployment held back by its failures, an engine no replica names. The thousand ready reports that follow a change
// of a thousand nodes then start no placement run at all.
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cluster, deployments, shards } from "../../api/db/schema.js";
import { placeIfNeeded } from "../../api/placement/apply.js";
import { createTestApp, declareOneGpuDeployment, registerNodes, type TestApp } from "../helpers/app.js";

let t: TestApp;
const tokens = new Map<string, string>();
const SETTINGS = { nodeLostAfterS: 180, repairGraceS: 60, repairMaxFraction: 0.25 };

beforeEach(async () => {
  t = await createTestApp({ settings: SETTINGS });
  for (const [id, token] of await registerNodes(t, ["n1", "n2"])) tokens.set(id, token);
  await declareOneGpuDeployment(t, 2);
});
afterEach(() => t.close());

const generation = async () => (await t.db.select().from(cluster))[0]!.generation;
const placedShards = () => t.db.select().from(shards);

/** Reports `state` for shards, each from its node; resolves with how far the generation moved. */
async function report(list: { nodeId: string; id: string }[], state: string, extra: object = {}): Promise<number> {
  const before = await generation();
  for (const s of list) {
    const r = await t.call("POST", `/api/v1/agents/${s.nodeId}/status`, {
      token: tokens.get(s.nodeId),
      body: { shards: [{ shardId: s.id, state, ...extra }] },
    });
    expect(r.status).toBe(200);
  }
  return (await generation()) - before;
}

describe("a status report", () => {
  it("that a deployment's new replicas are ready moves no generation", async () => {
    const placed = await placedShards();
    expect(placed).toHaveLength(2);
    expect(await report(placed, "starting")).toBe(0);
    expect(await report(placed, "ready")).toBe(0);
    const [d] = await t.db.select().from(deployments);
    expect(d!.awaitsReady).toBe(false);
  });

  it("of a ready replica during a rolling replacement moves it, and the replacement goes on", async () => {
    const old = await placedShards();
    await report(old, "ready");
    // a changed profile: each replica is replaced, a new one placed before an old one goes
    await t.admin("PUT", "/api/v1/models/m", {
      body: {
        spec: {
          weightsPath: "/m",
          profiles: [{ name: "one", engine: "vllm", gpuClass: "h100-80g", args: ["--max-model-len", "4096"] }],
        },
      },
    });
    await t.settle();
    const first = (await placedShards()).filter((s) => !old.some((o) => o.id === s.id));
    expect(first).toHaveLength(1);
    expect((await t.db.select().from(deployments))[0]!.awaitsReady).toBe(true);
    expect(await report(first, "ready")).toBe(1);
    await placeIfNeeded(t.store, t.clock.now(), SETTINGS);
    // one old replica released for the ready new one, the second new one placed
    const now = await placedShards();
    expect(now.filter((s) => old.some((o) => o.id === s.id))).toHaveLength(1);
    const second = now.filter((s) => !old.some((o) => o.id === s.id) && !first.some((f) => f.id === s.id));
    expect(second).toHaveLength(1);
    // the second new one ready: the last old one goes, and the deployment waits for nothing more
    expect(await report(second, "ready")).toBe(1);
    await placeIfNeeded(t.store, t.clock.now(), SETTINGS);
    expect((await placedShards()).filter((s) => old.some((o) => o.id === s.id))).toEqual([]);
    expect((await t.db.select().from(deployments))[0]!.awaitsReady).toBe(false);
    expect(await report([...first, ...second], "ready")).toBe(0);
  });

  it("of a ready replica of a deployment held back by its failures moves it", async () => {
    const failing = { count: 1, reason: "exited 1", since: t.clock.now(), retryAt: t.clock.now() };
    await t.db.update(deployments).set({ failing }).where(eq(deployments.name, "d"));
    expect(await report((await placedShards()).slice(0, 1), "ready")).toBe(1);
  });

  it("of an engine no replica names moves it (placement adopts or stops it)", async () => {
    expect(await report([{ nodeId: "n1", id: "s-unknown" }], "ready")).toBe(1);
  });

  it("of a failed shard, or of a degraded transport, moves it whatever the deployment", async () => {
    const [a, b] = await placedShards();
    expect(await report([a!], "failed")).toBe(1);
    const degraded = { verdict: "degraded", expected: "ib:fabric-a (mlx5_0)", via: "NET/Socket" };
    expect(await report([b!], "ready", { transport: degraded })).toBe(1);
  });
});
