// Drill: a two-node InfiniBand replica one of whose nodes' NCCL falls back to sockets (scenario key `nccl_fallback`;
// the mock engine prints what NCCL would). The agent reads it from the engine's log; the replica is degraded, the
// router does not use it, and `ctl status` and /api/v1/replicas say why. Where no other pair fits it stays so; once
// one does, it is re-placed away from that node and serves; under `transport: prefer` a degraded replica serves.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { killAll, runLlmgw, until } from "../helpers/process.js";
import { type Replica, SIM_ADMIN, type SimCluster, startSimCluster } from "../helpers/sim.js";

const tmp = tempDir();
let c: SimCluster;
let key: string;

type Transport = { verdict: string; reason?: string; observed?: string };
type Shown = Replica & { state: string; shards: (Replica["shards"][number] & { transport: Transport | null })[] };

beforeAll(async () => {
  c = await startSimCluster({
    dir: tmp.dir,
    scenario: `nodes:
  - { id: ib-1, kind: hgx-h100, uuid_prefix: e001, ib_fabric: ib-a, labels: { rack: a } }
  - { id: ib-2, kind: hgx-h100, uuid_prefix: e002, ib_fabric: ib-a, labels: { rack: a }, nccl_fallback: socket }
  - { id: ib-3, kind: hgx-h100, uuid_prefix: e003, ib_fabric: ib-a, labels: { rack: b } }
`,
    serveEnv: { LLMGW_SWEEP_INTERVAL_S: "1", LLMGW_REPAIR_MAX_FRACTION: "1" },
  });
  key = (await c.api("PUT", "/api/v1/api-keys/drill", { spec: {} })).body.secret;
}, 60_000);
afterAll(async () => {
  await c?.close();
  await killAll();
  tmp.cleanup();
});

/** A two-node replica of four H100 per node over InfiniBand (each node has room for two). */
const deployPair = (name: string, spec: Record<string, unknown>) =>
  c.deploy({ name, replicas: 1, gpu_class: "h100-80g", tp: 8, gpus_per_node: 4, nodes: 2, about: "" }, spec);
const replicasOf = async (name: string) =>
  (await c.api("GET", `/api/v1/replicas?deployment=${name}`)).body.items as Shown[];
/** Waits for the deployment's one replica to be in `state`. */
async function replicaIn(name: string, state: string, ms = 30_000): Promise<Shown> {
  let r: Shown | undefined;
  await until(async () => (r = (await replicasOf(name))[0])?.state === state, ms, `${name}'s replica ${state}`);
  return r!;
}
const onNode = (r: Shown, node: string) => r.shards.find((s) => s.nodeId === node);

describe("drills: NCCL off the fabric it was placed on", () => {
  it("a socket fallback on one node of an IB pair: not served, why in ctl status and /api/v1/replicas; re-placed when another pair fits", async () => {
    // only ib-1 and ib-2 are in rack a: no other pair to move to
    await deployPair("strict", { nodeSelector: { rack: "a" } });
    const r = await replicaIn("strict", "degraded");
    expect(r.shards.map((s) => [s.nodeId, s.fabric]).sort()).toEqual([
      ["ib-1", "ib:ib-a"],
      ["ib-2", "ib:ib-a"],
    ]);
    const bad = onNode(r, "ib-2")!.transport!;
    expect(bad.verdict).toBe("degraded");
    expect(bad.reason).toMatch(/^placed on ib:ib-a \(mlx5_\d+(,mlx5_\d+)*\); NCCL uses NET\/Socket on \S+$/);
    await until(
      async () => onNode((await replicasOf("strict"))[0]!, "ib-1")?.transport?.verdict === "ok",
      10_000,
      "ib-1 judged ok",
    );

    // the router does not use it, and says why (once its table, read every second, has the reports)
    let answer = { status: 0, text: "" };
    await until(
      async () => {
        const res = await c.chat(key, "strict");
        answer = { status: res.status, text: await res.text() };
        return answer.text.includes(`replica ${r.id} is not served`);
      },
      10_000,
      "the router's 503 naming the degraded replica",
    );
    expect(answer.status).toBe(503);
    expect(answer.text).toContain(`no ready replica of strict: replica ${r.id} is not served: ${bad.reason}`);

    const st = await runLlmgw(["ctl", "status"], { env: { LLMGW_SERVER: c.url, LLMGW_TOKEN: SIM_ADMIN } });
    expect(st.code, st.output).toBe(0);
    expect(st.output).toMatch(new RegExp(`\\nTransport\\n\\s+${r.id}/\\S+\\s+degraded:\\s+placed on ib:ib-a`));
    expect(st.output).toMatch(new RegExp(`\\n\\s*${r.id}\\s+strict\\s+\\S+\\s+degraded\\s`));

    // another pair fits once the selector goes: re-placed away from ib-2, and served
    await deployPair("strict", {});
    const moved = await replicaIn("strict", "ready", 40_000);
    expect(moved.id).not.toBe(r.id);
    expect(moved.shards.map((s) => s.nodeId)).not.toContain("ib-2");
    expect(moved.shards.every((s) => s.transport?.verdict === "ok")).toBe(true);
    await until(async () => (await c.chat(key, "strict")).status === 200, 10_000, "strict served");
    const ev = (await c.api("GET", "/api/v1/events?type=replica_repaired")).body.items as {
      message: string;
      data: { failedOn?: string[] };
    }[];
    expect(ev.find((e) => e.message.includes(r.id))).toMatchObject({
      message: `replica ${r.id} freed for re-placement: ${bad.reason}`,
      data: { failedOn: ["ib-2"] },
    });
  }, 120_000);

  it("under transport: prefer a degraded replica is served as it is", async () => {
    await deployPair("tolerant", { nodeSelector: { rack: "a" }, transport: "prefer" });
    const r = await replicaIn("tolerant", "degraded");
    expect(onNode(r, "ib-2")!.transport!.verdict).toBe("degraded");
    await until(async () => (await c.chat(key, "tolerant")).status === 200, 10_000, "tolerant served");
    const d = (await c.api("GET", "/api/v1/deployments/tolerant")).body;
    expect(d.status).toMatchObject({ phase: "Ready", ready: 1 });
  }, 60_000);
});
