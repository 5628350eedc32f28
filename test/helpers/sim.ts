// A simulated cluster for the failure drills: a real `llmgw serve` on a temp-file database and one real agent per
// scenario node on its simulated hardware (agent/sim/scenario.ts, as `llmgw demo` runs them), plus the handles a drill
// needs: kill or restart the control plane, an agent or a whole node, change a node's hardware state.
import { join } from "node:path";
import { agentSettings, modelProfile, parseScenario, type Scenario, setNodeState, type SimModel, type SimState, writeNode } from "../../agent/sim/scenario.js";
import { killEngines, recordedPid, writeAgentConfig } from "../../agent/sim/cluster.js";
import { apiCaller, freePort, LLMGW, type Proc, start, startServe, stop, until } from "./process.js";

export const SIM_ADMIN = `llmgw_adm_${"simdrill".repeat(5)}`;

export type Replica = { id: string; deployment: string; state: string; endpoint: string | null; shards: { shardId: string; nodeId: string; fabric: string; state?: string }[] };

/** Starts the control plane and every node's agent; resolves once every node is ready. */
export async function startSimCluster(o: {
  dir: string;
  scenario: string;
  /** The control plane's database: a libSQL server URL (migrated already), or a file in `dir` when absent. */
  db?: string;
  serveEnv?: Record<string, string>;
  agentExtra?: Record<string, unknown>;
  engineArgs?: string[];
}) {
  let scenario: Scenario = parseScenario(o.scenario, "drill scenario");
  const port = await freePort();
  const serveArgs = ["--db", o.db ?? join(o.dir, "llmgw.db"), "--port", String(port)];
  const serveEnv = { LLMGW_ADMIN_TOKEN: SIM_ADMIN, ...o.serveEnv };
  let server = await startServe(serveArgs, { env: serveEnv });
  const url = server.url;
  const api = apiCaller(url, SIM_ADMIN);
  // on a libSQL server the admin token is written just after the server listens
  let joinToken = "";
  await until(async () => !!(joinToken = (await api("POST", "/api/v1/join-tokens", { name: "sim" })).body?.token), 20_000, "a join token");
  const agents = new Map<string, Proc>();
  const configs = new Map<string, { config: string; stateDir: string; env: Record<string, string> }>();
  let nextPort = 0;
  for (const n of scenario.nodes) {
    const first = Math.max(await freePort(), nextPort);
    nextPort = first + 10;
    const sim = agentSettings(o.dir, n);
    writeNode(o.dir, n, scenario);
    const written = writeAgentConfig({ nodeId: n.id, server: url, joinToken, dir: o.dir, ports: [first, first + 9], extra: { ...sim.extra, restart_base_s: 0.2, restart_max_s: 1, ...o.agentExtra } });
    configs.set(n.id, { ...written, env: sim.env });
  }
  const startAgent = (id: string) => {
    const c = configs.get(id)!;
    const p = start(process.execPath, [LLMGW, "agent", "--config", c.config], { env: c.env });
    agents.set(id, p);
    return p;
  };
  for (const n of scenario.nodes) startAgent(n.id);

  const nodeState = async (id: string) => (await api("GET", `/api/v1/nodes/${id}`)).body?.state as string | undefined;
  const replicas = async (deployment?: string) => (await api("GET", `/api/v1/replicas${deployment ? `?deployment=${deployment}` : ""}`)).body.items as Replica[];
  await until(async () => (await Promise.all(scenario.nodes.map((n) => nodeState(n.id)))).every((s) => s === "ready"), 40_000, "every simulated node ready");

  return {
    url,
    api,
    agents,
    nodeState,
    replicas,
    stateDir: (id: string) => configs.get(id)!.stateDir,
    /** The engine pid the node's agent recorded for a shard. */
    enginePid: (id: string, shardId: string) => recordedPid(configs.get(id)!.stateDir, shardId),
    startAgent,
    /** SIGKILLs a node's agent (its engines keep running, as on a real node). */
    async killAgent(id: string) {
      const p = agents.get(id)!;
      p.child.kill("SIGKILL");
      await p.exited;
    },
    /** A node gone: its agent and every engine it started killed. */
    async killNode(id: string) {
      await this.killAgent(id);
      killEngines([configs.get(id)!.stateDir]);
    },
    /** Changes a node's simulated hardware (its agent sees it at its next discovery). */
    setState(id: string, state: SimState) {
      scenario = setNodeState(o.dir, scenario, id, state);
    },
    async killServer() {
      server.child.kill("SIGKILL");
      await server.exited;
    },
    async restartServer() {
      server = await startServe(serveArgs, { env: serveEnv });
      if (server.url !== url) throw new Error(`the control plane came back on ${server.url}, not ${url}`);
    },
    /** Declares a model on the mock engine and a deployment of it. */
    async deploy(m: SimModel, spec: Record<string, unknown> = {}) {
      const model = await api("PUT", `/api/v1/models/${m.name}`, { spec: { weightsPath: `/models/${m.name}`, profiles: [modelProfile(m, o.engineArgs ?? [])] } });
      if (model.status >= 300) throw new Error(`model ${m.name}: ${model.status} ${JSON.stringify(model.body)}`);
      const d = await api("PUT", `/api/v1/deployments/${m.name}`, { spec: { model: m.name, replicas: m.replicas, ...spec } });
      if (d.status >= 300) throw new Error(`deployment ${m.name}: ${d.status} ${JSON.stringify(d.body)}`);
    },
    /** Waits for `count` ready replicas of a deployment and returns them. */
    async ready(deployment: string, count = 1, ms = 30_000): Promise<Replica[]> {
      let items: Replica[] = [];
      await until(async () => (items = (await replicas(deployment)).filter((r) => r.state === "ready")).length >= count, ms, `${count} ready replica(s) of ${deployment}`);
      return items;
    },
    /** A chat completion of `model` through the router with API key `key`. */
    chat(key: string, model: string, o: { stream?: boolean; max_tokens?: number } = {}) {
      return fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: o.max_tokens ?? 3, stream: o.stream ?? false }),
      });
    },
    /** Makes an API key for the router and returns its secret. */
    async key(name = "drill"): Promise<string> {
      return (await api("PUT", `/api/v1/api-keys/${name}`, { spec: {} })).body.secret as string;
    },
    async close() {
      await Promise.all([...agents.values()].map(stop));
      killEngines([...configs.values()].map((c) => c.stateDir));
      await stop(server);
    },
  };
}
export type SimCluster = Awaited<ReturnType<typeof startSimCluster>>;
