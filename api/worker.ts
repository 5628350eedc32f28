// The Cloudflare Workers entry: the same app on a remote libSQL database, with the router (fetch-based), /metrics and a
// cron trigger for the liveness sweep. Migrations are applied out of band (`llmgw migrate`); /readyz fails until they
// are. Nothing runs at module scope — Workers refuse random values, timers and I/O there — so everything is built on
// the first request of an isolate (test/e2e/worker-build.test.ts and worker.test.ts check it).
import { createClient } from "@libsql/client/web";
import { drizzle } from "drizzle-orm/libsql/web";
import { createApp } from "./app.js";
import { appSettings, loadServerConfig, POLL_RESERVED_SUBREQUESTS, type ServerConfig } from "./config.js";
import { createStore } from "./db/client.js";
import { expectedMigrations } from "./db/journal.js";
import * as schema from "./db/schema.js";
import { ensureAdminToken } from "./db/tokens.js";
import type { AppDeps } from "./deps.js";
import { createLog } from "./log.js";
import { createIsolateMetrics } from "./metrics/isolate.js";
import { sweepEvents, sweepLiveness } from "./nodes/liveness.js";
import { placeAndWake } from "./placement/trigger.js";
import { createRowPoller } from "./poll-hub.js";
import { createIsolateRouter } from "./router/isolate.js";

type Env = Record<string, string | undefined>;
type Ctx = { waitUntil(p: Promise<unknown>): void };

type Built = {
  env: Env;
  config: ServerConfig;
  deps: AppDeps;
  app: ReturnType<typeof createApp>;
  admin: Promise<unknown>;
};

/** Config, store and app for this isolate's environment (rebuilt when the environment object changes). */
let built: Built | undefined;
function build(env: Env): Built {
  if (built?.env === env) return built;
  const log = createLog((line) => console.log(line));
  const result = loadServerConfig(env);
  if (!result.ok) throw new Error(`invalid configuration: ${result.errors.join("; ")}`);
  const config = result.config;
  const client = createClient({ url: config.dbUrl, authToken: config.dbAuthToken });
  const store = createStore(drizzle(client, { schema }), { serialize: false, file: false });
  const now = () => Date.now();
  const metrics = createIsolateMetrics({ db: store.db, now, lostAfterS: config.nodeLostAfterS, log });
  const fetchRouter = createIsolateRouter(store, {
    now,
    log,
    metrics: metrics.router,
    maxAttempts: config.routerMaxAttempts,
    maxRequestBytes: config.routerMaxRequestBytes,
    maxInflightPerReplica: config.routerMaxInflightPerReplica,
    queueTimeoutMs: config.routerQueueTimeoutS * 1000,
    timeouts: {
      connectMs: config.routerConnectTimeoutS * 1000,
      firstByteMs: config.routerFirstByteTimeoutS * 1000,
      idleMs: config.routerIdleTimeoutS * 1000,
    },
  });
  const waiter = createRowPoller(store, {
    everyMs: 1000,
    maxReads: config.workerSubrequests - POLL_RESERVED_SUBREQUESTS,
  });
  const deps: AppDeps = {
    store,
    now,
    log,
    settings: appSettings(config),
    migrations: expectedMigrations,
    waiter,
    fetchRouter,
    metricsText: () => metrics.text(),
    observePlacement: metrics.observePlacement,
  };
  const app = createApp(deps);
  // A Worker prints nothing at first start: the admin token must come from the LLMGW_ADMIN_TOKEN secret.
  const admin = config.adminToken
    ? ensureAdminToken(store, now(), config.adminToken).catch((e: unknown) =>
        log.error("admin token", { error: String(e) }),
      )
    : Promise.resolve();
  built = { env, config, deps, app, admin };
  return built;
}

export default {
  async fetch(request: Request, env: Env, ctx: Ctx): Promise<Response> {
    const b = build(env);
    await b.admin;
    return b.app.fetch(request, env, ctx as never);
  },
  async scheduled(_event: unknown, env: Env, ctx: Ctx): Promise<void> {
    const b = build(env);
    // placement right after the sweep: repairs must not wait for a poll (none comes when every agent is cut off)
    ctx.waitUntil(
      sweepLiveness(b.deps.store, Date.now(), b.config.nodeLostAfterS, b.config.repairGraceS)
        .then(() => sweepEvents(b.deps.store, Date.now(), b.config.eventsRetentionDays))
        .then(() => placeAndWake(b.deps, "a liveness sweep")),
    );
  },
};
