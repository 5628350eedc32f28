// A deployment whose engine keeps failing: the failure it last had (exit, run time, log tail) is kept per shard and
// shown; re-placement backs off, the phase is Failed with the reason, the router names it; a ready replica clears it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepLiveness } from "../../api/nodes/liveness.js";
import { FAILING_BACKOFF } from "../../api/placement/failing.js";
import { readTable } from "../../api/router/table.js";
import { failureText, type ShardFailure } from "../../shared/schemas/failure.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";

let t: TestApp;
let token = "";
const poll = () => t.call("GET", "/api/v1/agents/a/assignments", { token });
const report = (shards: object[]) => t.call("POST", "/api/v1/agents/a/status", { token, body: { shards } });
const failure = (n: number, last = "RuntimeError: CUDA error: out of memory"): ShardFailure => ({
  reason: "exit 1",
  exitCode: 1,
  ranS: 3,
  restart: 5,
  restartLimit: 5,
  gaveUp: n > 5,
  logTail: ["loading weights", last],
  at: t.clock.now(),
});
const current = async () => (await poll()).json.shards as { shardId: string; replicaId: string }[];
/** The one shard placed on the node fails past its restart limit. */
async function failIt() {
  // repair frees at most one replica a minute here (the budget of a one-replica fleet)
  t.clock.advance(61_000);
  const [s] = await current();
  const f = failure(6);
  const r = await report([
    { shardId: s!.shardId, replicaId: s!.replicaId, state: "failed", message: failureText(f), failure: f },
  ]);
  expect(r.status).toBe(200);
  return s!;
}
const status = async () => (await t.admin("GET", "/api/v1/deployments/crashy")).json.status;

beforeAll(async () => {
  t = await createTestApp();
  const r = await t.call("POST", "/api/v1/agents/register", {
    token: t.adminToken,
    body: registerBody("a", nodeInventory("a")),
  });
  token = r.json.nodeToken;
  await t.admin("PUT", "/api/v1/models/m", {
    body: {
      spec: {
        weightsPath: "/m",
        profiles: [{ name: "tp8", engine: "vllm", gpuClass: "h100-80g", tp: 8, gpusPerNode: 8 }],
      },
    },
  });
  await t.admin("PUT", "/api/v1/deployments/crashy", { body: { spec: { model: "m", replicas: 1, pool: "prod" } } });
});
afterAll(() => t.close());

describe("an engine that keeps failing", () => {
  it("keeps the shard's last failure through later reports and shows it in one line", async () => {
    const [s] = await current();
    await report([
      { shardId: s!.shardId, replicaId: s!.replicaId, state: "pending", message: "m", failure: failure(1) },
    ]);
    await report([{ shardId: s!.shardId, replicaId: s!.replicaId, state: "starting", message: "pid 9" }]);
    const [replica] = (await t.admin("GET", "/api/v1/replicas?deployment=crashy")).json.items;
    expect(replica.shards[0]).toMatchObject({
      state: "starting",
      lastFailure: {
        reason: "exit 1",
        exitCode: 1,
        ranS: 3,
        logTail: ["loading weights", "RuntimeError: CUDA error: out of memory"],
      },
      failure: "exit 1 after 3 s (restart 5 of 5): RuntimeError: CUDA error: out of memory",
    });
    const logs = await t.admin("GET", `/api/v1/replicas/${replica.id}/logs`);
    expect(logs.json.shards[0]).toMatchObject({ shardId: s!.shardId, nodeId: "a", text: replica.shards[0].failure });
    expect((await t.admin("GET", "/api/v1/replicas/r999/logs")).status).toBe(404);
  });

  it("re-places the first failure at once, then holds the deployment Failed with a growing back-off", async () => {
    const first = await failIt();
    const second = await current();
    expect(second).toHaveLength(1);
    expect(second[0]!.replicaId).not.toBe(first.replicaId);
    expect((await status()).phase).not.toBe("Failed");

    await failIt();
    expect(await current()).toEqual([]);
    const st = await status();
    expect(st.phase).toBe("Failed");
    expect(st.failure).toMatch(
      /^failed 2 times in a row past the restart limit \(last: exit 1 after 3 s \(gave up after 5 restarts\): RuntimeError: CUDA error: out of memory\); next try at \d\d:\d\d:\d\d UTC$/,
    );
    expect(st.pending).toEqual([{ count: 1, reason: st.failure }]);
    const ev = await t.admin("GET", "/api/v1/events?type=deployment_failing");
    expect(ev.json.items[0].message).toBe(`deployment crashy ${st.failure}`);

    // the sweep before the back-off has passed places nothing; after it, the deployment is tried again
    t.clock.advance(FAILING_BACKOFF.firstMs - 2000);
    await sweepLiveness(t.store, t.clock.now(), 180, 300);
    expect(await current()).toEqual([]);
    t.clock.advance(3000);
    await sweepLiveness(t.store, t.clock.now(), 180, 300);
    expect(await current()).toHaveLength(1);

    // the third failure waits twice as long
    await failIt();
    t.clock.advance(FAILING_BACKOFF.firstMs + 2000);
    await sweepLiveness(t.store, t.clock.now(), 180, 300);
    expect(await current()).toEqual([]);
    expect((await status()).failure).toMatch(/^failed 3 times in a row/);
  });

  it("names the model's own failure when the router has no ready replica", async () => {
    const table = await readTable(t.db, t.clock.now());
    expect(table.declared.get("m")).toMatch(/^failed 3 times in a row past the restart limit \(last: exit 1/);
  });

  it("clears the failures once a replica is ready", async () => {
    t.clock.advance(2 * FAILING_BACKOFF.firstMs + 1000);
    await sweepLiveness(t.store, t.clock.now(), 180, 300);
    const [s] = await current();
    await report([{ shardId: s!.shardId, replicaId: s!.replicaId, state: "ready" }]);
    await poll();
    const st = await status();
    expect(st.phase).toBe("Ready");
    expect(st.failure).toBeUndefined();
    // a failure now is a first one again: re-placed at once
    await failIt();
    expect(await current()).toHaveLength(1);
  });
});
