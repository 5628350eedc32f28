// Starting a simulated cluster: a real `llmgw serve` and one real agent per scenario node, each on its fake hardware.
// `llmgw demo` and the failure drills both start theirs here; each hands in how it runs a process (the demo logs to
// files, the tests keep the output for their assertions) and how it waits (the demo's deadline, the tests' own).
import { writeAgentConfig } from "./cluster.js";
import { freePortBlock } from "./free-port.js";
import { agentSettings, modelProfile, type Scenario, type SimModel, writeNode } from "./scenario.js";

/** Starts `llmgw <args…>` as a child process named `name` with `env` added. */
export type SimSpawn<P> = (name: string, args: string[], env: Record<string, string>) => P;
/** Polls `fn` until it returns a value; `ms` is how long the caller would wait for this step (a hint). */
export type SimWait = <T>(what: string, fn: () => Promise<T | undefined>, ms?: number) => Promise<T>;

/** One simulated node's agent, ready to start: its agent.yaml, state dir and the environment of its fake hardware. */
export type SimAgent = { id: string; config: string; stateDir: string; env: Record<string, string> };

/** An admin call that throws on anything but 2xx, with the answer in the message. */
export function simApi(url: string, token: string) {
  // biome-ignore lint/suspicious/noExplicitAny: the API's JSON as the demo reads it, field by field
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : {};
  };
}

/** The model and deployment a scenario model declares: the mock engine, `engineArgs` passed to it. */
export function simDeclarations(m: SimModel, engineArgs: string[]) {
  return {
    model: { spec: { weightsPath: `/models/${m.name}`, profiles: [modelProfile(m, engineArgs)] } },
    deployment: { spec: { model: m.name, replicas: m.replicas, ...(m.transport ? { transport: m.transport } : {}) } },
  };
}

/**
 * Starts the control plane, writes every node's fake hardware and agent.yaml (ten engine ports each), starts every
 * agent and resolves once every node is ready. `serveArgs` are `llmgw serve`'s (at least --db and --port).
 */
export async function startSimCluster<P extends { output(): string }>(o: {
  dir: string;
  scenario: Scenario;
  admin: string;
  serveArgs: string[];
  serveEnv?: Record<string, string>;
  agentExtra?: Record<string, unknown>;
  spawn: SimSpawn<P>;
  wait: SimWait;
}) {
  const serve = o.spawn("llmgw serve", ["serve", ...o.serveArgs], { LLMGW_ADMIN_TOKEN: o.admin, ...o.serveEnv });
  const url = await o.wait(
    "the control plane to listen",
    async () => serve.output().match(/serving on (https?:\/\/\S+)/)?.[1],
    20_000,
  );
  const api = simApi(url, o.admin);
  // on a libSQL server the admin token is written just after the server listens
  const joinToken: string = await o.wait(
    "a join token",
    async () => (await api("POST", "/api/v1/join-tokens", { name: "sim" })).token,
    20_000,
  );

  const agents = new Map<string, SimAgent>();
  // ten engine ports per node, in one block below the ephemeral range (free-port.ts)
  let nextPort = await freePortBlock(10 * o.scenario.nodes.length);
  for (const n of o.scenario.nodes) {
    const first = nextPort;
    nextPort = first + 10;
    const sim = agentSettings(o.dir, n);
    writeNode(o.dir, n, o.scenario);
    const extra = { ...sim.extra, ...o.agentExtra };
    const { config, stateDir } = writeAgentConfig({
      nodeId: n.id,
      server: url,
      joinToken,
      dir: o.dir,
      ports: [first, first + 9],
      extra,
    });
    agents.set(n.id, { id: n.id, config, stateDir, env: sim.env });
  }
  const running = new Map<string, P>();
  const startAgent = (id: string): P => {
    const a = agents.get(id)!;
    const p = o.spawn(`agent ${id}`, ["agent", "--config", a.config], a.env);
    running.set(id, p);
    return p;
  };
  for (const id of agents.keys()) startAgent(id);
  const count = agents.size;
  await o.wait(
    `${count} ready nodes`,
    async () =>
      (await api("GET", "/api/v1/nodes")).items.filter((n: { state: string }) => n.state === "ready").length === count
        ? true
        : undefined,
    40_000,
  );
  return { url, api, serve, agents, running, startAgent };
}
