// Failure drills (docs/architecture.md, failure behaviour) with real processes on a simulated cluster of two HGX H100
// nodes: what a user would
// check when an agent, the control plane or an engine dies under a running cluster.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processAlive as alive, LLMGW, mockProfile } from "../../agent/sim/cluster.js";
import { simDir } from "../../agent/sim/scenario.js";
import { tempDir } from "../helpers/db.js";
import { killAll, until } from "../helpers/process.js";
import { type SimCluster, startSimCluster } from "../helpers/sim.js";

const tmp = tempDir();
let c: SimCluster;
let key: string;

beforeAll(async () => {
  c = await startSimCluster({
    dir: tmp.dir,
    scenario: `nodes:
  - { id: hgx-a, kind: hgx-h100, uuid_prefix: e001 }
  - { id: hgx-b, kind: hgx-h100, uuid_prefix: e002 }
`,
    agentExtra: { restart_limit: 2 },
    engineArgs: ["--tokens-per-s", "50"],
  });
  key = await c.key();
}, 60_000);
afterAll(async () => {
  await c?.close();
  await killAll();
  tmp.cleanup();
});

const chat = (model: string, o?: { stream?: boolean; max_tokens?: number }) => c.chat(key, model, o);
const inflight = async (model: string) => {
  const text = await (await fetch(`${c.url}/metrics`)).text();
  return Number(text.match(new RegExp(`^llmgw_router_inflight\\{model="${model}"\\} (\\S+)$`, "m"))?.[1] ?? "0");
};

describe("drills: processes dying under a running cluster", () => {
  it("an agent SIGKILLed and restarted: its engine keeps serving through the router and is adopted with the same pid", async () => {
    await c.deploy({ name: "steady", replicas: 1, gpu_class: "h100-80g", tp: 4, gpus_per_node: 4, about: "" });
    const [r] = await c.ready("steady");
    const { nodeId, shardId } = r!.shards[0]!;
    const pid = c.enginePid(nodeId, shardId);
    await until(async () => (await chat("steady")).status === 200, 10_000, "the router serving steady");

    await c.killAgent(nodeId);
    for (let i = 0; i < 3; i++) expect((await chat("steady")).status).toBe(200);

    const agent = c.startAgent(nodeId);
    await agent.waitFor(/adopt/i, 20_000);
    await until(async () => (await c.nodeState(nodeId)) === "ready", 20_000, "the node ready again");
    const [after] = await c.ready("steady");
    expect([after!.id, after!.endpoint]).toEqual([r!.id, r!.endpoint]);
    expect(c.enginePid(nodeId, shardId)).toBe(pid);
    expect(alive(pid)).toBe(true);
    expect((await chat("steady")).status).toBe(200);
  }, 60_000);

  it("the control plane SIGKILLed and restarted on the same database: engines keep serving, the agents back off and resume, nothing is re-placed", async () => {
    const [before] = await c.ready("steady");
    const { nodeId, shardId } = before!.shards[0]!;
    const pid = c.enginePid(nodeId, shardId);

    await c.killServer();
    // the engine answers on its own while the control plane is gone, and the agent keeps running
    for (let i = 0; i < 3; i++) expect((await fetch(`${before!.endpoint}/v1/models`)).status).toBe(200);
    const agent = c.agents.get(nodeId)!;
    await agent.waitFor(/control plane: .*cannot reach .*retrying in/, 20_000);
    expect(agent.child.exitCode).toBeNull();

    await c.restartServer();
    await until(async () => (await c.nodeState(nodeId)) === "ready", 30_000, "the node ready again");
    const after = await c.replicas("steady");
    expect(after.map((r) => [r.id, r.state, r.endpoint])).toEqual([[before!.id, "ready", before!.endpoint]]);
    expect(c.enginePid(nodeId, shardId)).toBe(pid);
    expect(alive(pid)).toBe(true);
  }, 90_000);

  it("an engine dying mid-stream gives the client a clean error and the router's counters return to zero; the agent restarts it", async () => {
    await c.deploy({ name: "slow", replicas: 1, gpu_class: "h100-80g", about: "" });
    const [r] = await c.ready("slow");
    const { nodeId, shardId } = r!.shards[0]!;
    const pid = c.enginePid(nodeId, shardId);
    // the router's endpoint table follows the database within a second
    let res!: Response;
    await until(
      async () => (res = await chat("slow", { stream: true, max_tokens: 400 })).status === 200,
      10_000,
      "the router serving slow",
    );
    const reader = res.body!.getReader();
    await reader.read();
    process.kill(pid, "SIGKILL");
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toMatch(/"code":"upstream_error"/);
    await until(async () => (await inflight("slow")) === 0, 10_000, "the in-flight gauge back to 0");

    // restarted in place with back-off: same replica, a new engine process, serving again
    await until(async () => c.enginePid(nodeId, shardId) !== pid, 20_000, "a new engine pid");
    const [again] = await c.ready("slow");
    expect(again!.id).toBe(r!.id);
    await until(async () => (await chat("slow")).status === 200, 20_000, "the router serving again");
  }, 60_000);

  it("an engine crash-looping past its restart limit: the replica is re-placed on the other node", async () => {
    // the engine fails at once on a node whose sim dir holds `engine-crashes` (a node-local fault, like a broken GPU)
    const mock = mockProfile("crashy", { gpuClass: "h100-80g", tp: 2, gpusPerNode: 2 }, ["--tokens-per-s", "0"]);
    const wrapped = {
      ...mock,
      args: [
        "/bin/sh",
        "-c",
        'if [ -e "$FAKE_SIM_DIR/engine-crashes" ]; then echo "simulated crash" >&2; exit 3; fi; exec "$@"',
        "sh",
        ...(mock.args as string[]),
      ],
    };
    expect(wrapped.args).toContain(LLMGW);
    await c.api("PUT", "/api/v1/models/crashy", { spec: { weightsPath: "/models/crashy", profiles: [wrapped] } });
    await c.api("PUT", "/api/v1/deployments/crashy", { spec: { model: "crashy", replicas: 1 } });
    const [first] = await c.ready("crashy");
    const { nodeId, shardId } = first!.shards[0]!;
    const other = nodeId === "hgx-a" ? "hgx-b" : "hgx-a";

    writeFileSync(join(simDir(tmp.dir, nodeId), "engine-crashes"), "");
    process.kill(c.enginePid(nodeId, shardId), "SIGKILL");

    // restarted twice (exit 3 each time), then failed: the control plane frees the replica and places it elsewhere
    let moved: { id: string; shards: { nodeId: string }[] } | undefined;
    await until(
      async () => !!(moved = (await c.ready("crashy")).find((r) => r.id !== first!.id)),
      40_000,
      "a new ready replica",
    ).catch((e) => c.explain(e, "crashy"));
    expect(moved!.shards.map((s) => s.nodeId)).toEqual([other]);
    expect((await c.replicas("crashy")).map((r) => r.id)).toEqual([moved!.id]);
    const events = (await c.api("GET", "/api/v1/events?limit=100")).body.items as { type: string; message: string }[];
    expect(events.find((e) => e.type === "replica_repaired")?.message).toBe(
      `replica ${first!.id} freed for re-placement: a shard failed past its restart limit`,
    );
    expect(existsSync(join(simDir(tmp.dir, other), "engine-crashes"))).toBe(false);
  }, 90_000);
});
