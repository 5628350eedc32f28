// An API instance with its router on a real HTTP port, over a temp-file database, and "replicas" made of real
// mock-engine processes: the test plays the agent (registers a node, polls its shards, starts the engines on the
// ports placement chose, reports them ready).
import { createApp } from "../../api/app.js";
import { createBackground } from "../../api/background.js";
import { expectedMigrations } from "../../api/db/journal.js";
import { ensureAdminToken } from "../../api/db/tokens.js";
import { listen } from "../../api/http-server.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { createPollHub } from "../../api/poll-hub.js";
import { createRouter, type RouterOptions } from "../../api/router/index.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import { mockProfile } from "./agents.js";
import { defaultSettings, migratedDb, silentLog } from "./app.js";
import { nodeInventory, registerBody } from "./inventory.js";
import { apiCaller, freePortBlock, LLMGW, type Proc, start, until } from "./process.js";

export type Stack = Awaited<ReturnType<typeof startStack>>;

/** The app with a router, served on a free port. */
export async function startStack(o: Partial<RouterOptions> = {}) {
  const migrated = await migratedDb();
  const { client, store } = migrated;
  const admin = (await ensureAdminToken(store, Date.now()))!;
  const routing = createRouter(store, { now: Date.now, log: silentLog, tableTtlMs: 200, usageFlushMs: 60_000, ...o });
  const background = createBackground();
  const app = createApp({
    store,
    now: Date.now,
    log: silentLog,
    settings: defaultSettings(),
    migrations: expectedMigrations,
    waiter: createPollHub(store, 50),
    background: background.run,
    placementCache: newPlacementCache(),
    router: routing.router,
    metricsText: () => routing.registry.metrics(),
  });
  const server = listen(app, routing.handler, "127.0.0.1", 0);
  await new Promise<void>((ok) => server.once("listening", () => ok()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const engines: Proc[] = [];
  const api = apiCaller(url, admin);
  return {
    url,
    admin,
    store,
    client,
    routing,
    api,
    engines,
    /** Makes an API key and returns its secret. */
    async key(name: string, spec: Record<string, unknown> = {}): Promise<string> {
      const r = await api("PUT", `/api/v1/api-keys/${name}`, { spec });
      if (r.status !== 201) throw new Error(`key ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.secret as string;
    },
    /**
     * Declares `model` with `replicas` one-GPU replicas on a fresh node, starts their mock engines (with `engineArgs`,
     * per replica index), reports them ready and waits until the router sees them.
     */
    replicas: (model: string, count: number, engineArgs: (i: number) => string[] = () => []) =>
      declareReplicas(
        api,
        engines,
        model,
        count,
        engineArgs,
        async () => (await routing.router.table.get()).ready.get(model)?.length === count,
      ),
    async close() {
      await routing.close().catch(() => undefined);
      await new Promise<void>((ok) => server.close(() => ok()));
      await background.drain();
      migrated.close();
    },
  };
}

/**
 * Plays the agent of a fresh node for `model`: registers it, declares the model (mock engine) and a deployment of
 * `count` replicas on it, starts a mock engine on each shard's port, reports them ready, and waits for `routed()`.
 */
export async function declareReplicas(
  api: ReturnType<typeof apiCaller>,
  engines: Proc[],
  model: string,
  count: number,
  engineArgs: (i: number) => string[],
  routed: () => Promise<boolean>,
) {
  const nodeId = `node-${model}`;
  const join = (await api("POST", "/api/v1/join-tokens", { name: nodeId })).body.token as string;
  const first = await freePortBlock(41);
  const reg = await api(
    "POST",
    "/api/v1/agents/register",
    {
      ...registerBody(nodeId, nodeInventory(nodeId)),
      mgmtAddr: "127.0.0.1",
      labels: { pool: "prod", for: model },
      portRange: { first, last: first + 40 },
    },
    join,
  );
  const token = reg.body.nodeToken as string;
  await api("PUT", `/api/v1/models/${model}`, {
    spec: { weightsPath: `/models/${model}`, profiles: [mockProfile("one")] },
  });
  await api("PUT", `/api/v1/deployments/${model}`, {
    spec: { model, replicas: count, pool: "prod", nodeSelector: { for: model } },
  });
  let shards: StartShard[] = [];
  await until(
    async () =>
      (shards = (await api("GET", `/api/v1/agents/${nodeId}/assignments`, undefined, token)).body.shards).length ===
      count,
    10_000,
    "shards placed",
  );
  shards.sort((a, b) => (a.replicaId < b.replicaId ? -1 : 1));
  const started = shards.map((s, i) => {
    const p = start(process.execPath, [
      LLMGW,
      "mock-engine",
      "--port",
      String(s.httpPort),
      "--model",
      model,
      "--host",
      "127.0.0.1",
      ...engineArgs(i),
    ]);
    engines.push(p);
    return p;
  });
  await Promise.all(started.map((p) => p.waitFor(/listening on/)));
  await api(
    "POST",
    `/api/v1/agents/${nodeId}/status`,
    { shards: shards.map((s) => ({ shardId: s.shardId, replicaId: s.replicaId, state: "ready" })) },
    token,
  );
  await until(routed, 10_000, "router sees the replicas");
  return shards.map((s, i) => ({ shard: s, url: `http://127.0.0.1:${s.httpPort}`, proc: started[i]! }));
}
