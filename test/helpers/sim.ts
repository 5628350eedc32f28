// A simulated cluster for the failure drills: a real `llmgw serve` on a temp-file database and one real agent per
// scenario node on its simulated hardware (agent/sim/scenario.ts, as `llmgw demo` runs them), plus the handles a drill
// needs: kill or restart the control plane, an agent or a whole node, change a node's hardware state.
import { join } from "node:path";
import { killEngines, recordedPid } from "../../agent/sim/cluster.js";
import {
  agentSettings,
  parseScenario,
  type Scenario,
  type SimModel,
  type SimNode,
  type SimState,
  setNodeState,
} from "../../agent/sim/scenario.js";
import { simDeclarations, startSimCluster as startSim } from "../../agent/sim/start.js";
import { apiCaller, freePort, LLMGW, start, startServe, stop, until } from "./process.js";

export const SIM_ADMIN = `llmgw_adm_${"simdrill".repeat(5)}`;

export type Replica = {
  id: string;
  deployment: string;
  state: string;
  endpoint: string | null;
  shards: {
    shardId: string;
    nodeId: string;
    fabric: string;
    state?: string;
    /** What the shard's NCCL reported using, judged against its fabric (null: NCCL said nothing about it). */
    transport?: { verdict: string; via?: string; observed?: string; reason?: string } | null;
  }[];
};

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
  const sim = await startSim({
    dir: o.dir,
    scenario,
    admin: SIM_ADMIN,
    serveArgs,
    serveEnv: o.serveEnv,
    agentExtra: { restart_base_s: 0.2, restart_max_s: 1, ...o.agentExtra },
    spawn: (_name, args, env) => start(process.execPath, [LLMGW, ...args], { env }),
    wait: async (what, fn, ms) => {
      let got: Awaited<ReturnType<typeof fn>>;
      await until(async () => (got = await fn()) !== undefined, ms, what);
      return got!;
    },
  });
  const { url, startAgent } = sim;
  let server = sim.serve;
  const agents = sim.running;
  const api = apiCaller(url, SIM_ADMIN);
  const nodeState = async (id: string) => (await api("GET", `/api/v1/nodes/${id}`)).body?.state as string | undefined;
  const replicas = async (deployment?: string) =>
    (await api("GET", `/api/v1/replicas${deployment ? `?deployment=${deployment}` : ""}`)).body.items as Replica[];

  /**
   * Throws `e` with what a failed wait needs to be read: the deployment's replicas as they are, the last events and
   * each agent's last lines.
   */
  const explain = async (e: unknown, deployment: string): Promise<never> => {
    const seen = await replicas(deployment).catch((x: unknown) => String(x));
    const events = await api("GET", "/api/v1/events?limit=15").catch((x: unknown) => String(x));
    const logs = [...agents].map(([id, p]) => `--- agent ${id}\n${p.output().slice(-3000)}`).join("\n");
    throw new Error(
      `${(e as Error).message}\nreplicas: ${JSON.stringify(seen)}\nevents: ${JSON.stringify(typeof events === "string" ? events : events.body?.items)}\n${logs}`,
    );
  };

  return {
    url,
    api,
    agents,
    nodeState,
    replicas,
    stateDir: (id: string) => sim.agents.get(id)!.stateDir,
    /** The engine pid the node's agent recorded for a shard. */
    enginePid: (id: string, shardId: string) => recordedPid(sim.agents.get(id)!.stateDir, shardId),
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
      killEngines([sim.agents.get(id)!.stateDir]);
    },
    /** Changes a node's simulated hardware (its agent sees it at its next discovery). */
    setState(id: string, state: SimState) {
      scenario = setNodeState(o.dir, scenario, id, state);
    },
    /**
     * Makes a node's NCCL fall back to sockets (`socket`) or not (undefined), as the scenario key `nccl_fallback` does
     * at start: its agent is SIGKILLed and started again with the environment that says so, which the engines it
     * starts from then on inherit (the ones it adopts keep theirs: a drill kills them to see the change).
     */
    async setNcclFallback(id: string, fallback: SimNode["nccl_fallback"]) {
      const a = sim.agents.get(id);
      if (!a) throw new Error(`no node ${id} in the scenario`);
      await this.killAgent(id);
      scenario = {
        ...scenario,
        nodes: scenario.nodes.map((n) => (n.id === id ? { ...n, nccl_fallback: fallback } : n)),
      };
      a.env = agentSettings(o.dir, scenario.nodes.find((n) => n.id === id)!).env;
      startAgent(id);
    },
    /** The running `llmgw serve` process (to signal it). */
    server: () => server,
    async killServer() {
      server.child.kill("SIGKILL");
      await server.exited;
    },
    async restartServer() {
      const next = await startServe(serveArgs, { env: serveEnv });
      server = next;
      if (next.url !== url) throw new Error(`the control plane came back on ${next.url}, not ${url}`);
    },
    /** Declares a model on the mock engine and a deployment of it. */
    async deploy(m: SimModel, spec: Record<string, unknown> = {}) {
      const d = simDeclarations(m, o.engineArgs ?? []);
      await sim.api("PUT", `/api/v1/models/${m.name}`, d.model);
      await sim.api("PUT", `/api/v1/deployments/${m.name}`, { spec: { ...d.deployment.spec, ...spec } });
    },
    /** Waits for `count` ready replicas of a deployment and returns them. */
    async ready(deployment: string, count = 1, ms = 30_000): Promise<Replica[]> {
      let items: Replica[] = [];
      await until(
        async () => (items = (await replicas(deployment)).filter((r) => r.state === "ready")).length >= count,
        ms,
        `${count} ready replica(s) of ${deployment}`,
      ).catch((e: unknown) => explain(e, deployment));
      return items;
    },
    explain,
    /** A chat completion of `model` through the router with API key `key`. */
    chat(key: string, model: string, o: { stream?: boolean; max_tokens?: number } = {}) {
      return fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model,
          messages: [{ role: "user", content: "hi" }],
          max_tokens: o.max_tokens ?? 3,
          stream: o.stream ?? false,
        }),
      });
    },
    /** Makes an API key for the router and returns its secret. */
    async key(name = "drill"): Promise<string> {
      return (await api("PUT", `/api/v1/api-keys/${name}`, { spec: {} })).body.secret as string;
    },
    async close() {
      await Promise.all([...agents.values()].map(stop));
      killEngines([...sim.agents.values()].map((a) => a.stateDir));
      await stop(server);
    },
  };
}
export type SimCluster = Awaited<ReturnType<typeof startSimCluster>>;
