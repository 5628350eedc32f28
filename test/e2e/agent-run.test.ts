// The agent at work, with real processes: `llmgw serve`, agents on the fake nvidia-smi, mock engines started by the
// agents. Engines are detached by design, so every one is killed by its process group at the end.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HGX_SMI,
  killEngines,
  liveEngines,
  mockProfile,
  recordedPid,
  startAgent,
  writeAgentConfig,
} from "../helpers/agents.js";
import { tempDir } from "../helpers/db.js";
import { freePortBlock, killAll, type Proc, runLlmgw, startServe, stop, until } from "../helpers/process.js";

const ADMIN = `llmgw_adm_${"e2eagent".repeat(5)}`;
const tmp = tempDir();
const stateDirs: string[] = [];
let server: Awaited<ReturnType<typeof startServe>>;
let joinToken = "";
const agents = new Map<string, { proc: Proc; config: string; stateDir: string }>();

const api = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON field by field
  return { status: r.status, body: r.status === 204 ? undefined : ((await r.json()) as any) };
};
type Replica = {
  id: string;
  state: string;
  endpoint: string | null;
  shards: { shardId: string; nodeId: string; rank: number; state: string; httpPort: number }[];
};
const replicas = async (deployment: string): Promise<Replica[]> =>
  (await api("GET", `/api/v1/replicas?deployment=${deployment}`)).body.items;
const readyReplicas = async (deployment: string, n: number) => {
  await until(
    async () => (await replicas(deployment)).filter((r) => r.state === "ready").length === n,
    30_000,
    `${n} ready replica(s) of ${deployment}`,
  );
  return replicas(deployment);
};
const debugEnv = async (port: number) =>
  (await (await fetch(`http://127.0.0.1:${port}/debug/env`)).json()) as Record<string, string>;

/** Ten free ports below the ephemeral range (engines of different agents on this host must not collide). */
const portRange = async (): Promise<[number, number]> => {
  const p = await freePortBlock(10);
  return [p, p + 9];
};

async function launchAgent(nodeId: string, extra: Record<string, unknown> = {}) {
  const { config, stateDir } = writeAgentConfig({
    nodeId,
    server: server.url,
    joinToken,
    dir: tmp.dir,
    ports: await portRange(),
    extra,
  });
  stateDirs.push(stateDir);
  const proc = startAgent(config);
  agents.set(nodeId, { proc, config, stateDir });
  return agents.get(nodeId)!;
}

beforeAll(async () => {
  server = await startServe(["--db", `${tmp.dir}/llmgw.db`], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
  joinToken = (await api("POST", "/api/v1/join-tokens", { name: "e2e" })).body.token;
  await launchAgent("n1", { fabrics: [{ name: "ib-e2e", hcas: ["mlx5_0", "mlx5_1"] }] });
  await launchAgent("n2", { fabrics: [{ name: "ib-e2e", hcas: ["mlx5_0", "mlx5_1"] }] });
  await until(
    async () =>
      (await api("GET", "/api/v1/nodes")).body.items.filter((n: { state: string }) => n.state === "ready").length === 2,
    30_000,
    "two ready nodes",
  );
}, 60_000);

afterAll(async () => {
  await killAll();
  killEngines(stateDirs);
  if (server) await stop(server);
  tmp.cleanup();
});

describe("llmgw agent with real engines", () => {
  it("starts a deployment's engine with its GPUs, reports it ready, and the endpoint serves", async () => {
    await api("PUT", "/api/v1/models/solo", {
      spec: { weightsPath: "/models/solo", profiles: [mockProfile("four", { tp: 4, gpusPerNode: 4 })] },
    });
    await api("PUT", "/api/v1/deployments/solo", { spec: { model: "solo", replicas: 1 } });
    const [r] = await readyReplicas("solo", 1);
    const port = r!.shards[0]!.httpPort;
    expect(r!.endpoint).toBe(`http://127.0.0.1:${port}`);
    const env = await debugEnv(port);
    expect(env.CUDA_VISIBLE_DEVICES).toMatch(/^[0-7],[0-7],[0-7],[0-7]$/);
    expect(new Set(env.CUDA_VISIBLE_DEVICES!.split(",")).size).toBe(4);
    expect(env).toMatchObject({ LLMGW_RANK: "0", LLMGW_NNODES: "1" });
    const client = new OpenAI({ baseURL: `${r!.endpoint}/v1`, apiKey: "unused" });
    const chat = await client.chat.completions.create({
      model: "solo",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 3,
    });
    expect(chat.choices[0]!.message.content).toBe("token0 token1 token2");
  }, 60_000);

  it("starts both ranks of a two-node replica, with the leader's address and the IB fabric's NCCL settings", async () => {
    await api("PUT", "/api/v1/models/duo", {
      spec: { weightsPath: "/models/duo", profiles: [mockProfile("two-nodes", { tp: 8, gpusPerNode: 4, nodes: 2 })] },
    });
    await api("PUT", "/api/v1/deployments/duo", { spec: { model: "duo", replicas: 1 } });
    const [r] = await readyReplicas("duo", 1);
    const byRank = [...r!.shards].sort((a, b) => a.rank - b.rank);
    expect(new Set(byRank.map((s) => s.nodeId))).toEqual(new Set(["n1", "n2"]));
    const [leader, worker] = await Promise.all(byRank.map((s) => debugEnv(s.httpPort)));
    for (const [rank, env] of [leader!, worker!].entries()) {
      expect(env).toMatchObject({
        LLMGW_RANK: String(rank),
        LLMGW_NNODES: "2",
        LLMGW_LEADER_ADDR: "127.0.0.1",
        NCCL_MNNVL_ENABLE: "0",
      });
      expect(env.NCCL_IB_HCA).toMatch(/mlx5_[01]/);
    }
    expect(worker!.LLMGW_LEADER_PORT).toBe(leader!.LLMGW_LEADER_PORT);
  }, 60_000);

  it("keeps engines serving through an agent SIGKILL; the next agent adopts them without restarting them", async () => {
    const [r] = await replicas("solo");
    const shard = r!.shards[0]!;
    const node = agents.get(shard.nodeId)!;
    const pid = recordedPid(node.stateDir, shard.shardId);
    node.proc.child.kill("SIGKILL");
    await node.proc.exited;
    const client = new OpenAI({ baseURL: `${r!.endpoint}/v1`, apiKey: "unused" });
    for (let i = 0; i < 3; i++)
      expect(
        (await client.completions.create({ model: "solo", prompt: "still there?", max_tokens: 2 })).choices[0]!.text,
      ).toBe("token0 token1");

    const again = startAgent(node.config);
    agents.set(shard.nodeId, { ...node, proc: again });
    await again.waitFor(new RegExp(`shard ${shard.shardId}: adopted running engine pid ${pid}`));
    // the first poll's reconcile pass has run once this line is printed
    await again.waitFor(new RegExp(`assignments at index \\d+: .*${shard.shardId}`));
    expect(recordedPid(node.stateDir, shard.shardId)).toBe(pid);
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(again.output()).not.toMatch(new RegExp(`shard ${shard.shardId}: (starting|pending|stopped)`));
    expect((await replicas("solo"))[0]!.state).toBe("ready");
  }, 60_000);

  it("stops on SIGTERM with status 0 and leaves its engines serving", async () => {
    const [r] = await replicas("duo");
    const leader = r!.shards.find((s) => s.rank === 0)!;
    const node = agents.get(leader.nodeId)!;
    expect(await stop(node.proc)).toBe(0);
    expect(node.proc.output()).toContain("SIGTERM: stopping the agent; engines keep running");
    expect((await fetch(`${r!.endpoint}/health`)).status).toBe(200);
    expect(() => process.kill(recordedPid(node.stateDir, leader.shardId), 0)).not.toThrow();
  }, 30_000);

  it("--once three times in a row converges to one engine per shard", async () => {
    const { config, stateDir } = writeAgentConfig({
      nodeId: "n3",
      server: server.url,
      joinToken,
      dir: tmp.dir,
      ports: await portRange(),
      extra: { labels: { role: "once" } },
    });
    stateDirs.push(stateDir);
    await api("PUT", "/api/v1/models/oncemodel", {
      spec: { weightsPath: "/models/once", profiles: [mockProfile("one", {})] },
    });
    await api("PUT", "/api/v1/deployments/oncemodel", {
      spec: { model: "oncemodel", replicas: 2, nodeSelector: { role: "once" } },
    });
    let first: number[] | undefined;
    for (let run = 1; run <= 3; run++) {
      const r = await runLlmgw(["agent", "--config", config, "--once"], { env: HGX_SMI });
      expect(r.code, r.output).toBe(0);
      expect(r.output).toMatch(/2 shards assigned/);
      // the first run starts the two engines; the next ones adopt them, same pids, nothing more started
      const pids = [...liveEngines([stateDir]).values()].sort();
      expect(pids).toHaveLength(2);
      first ??= pids;
      expect(pids).toEqual(first);
    }
    await readyReplicas("oncemodel", 2);
  }, 60_000);
});
