// The Node entry: opens the database, migrates an embedded one, ensures an admin token, serves the app.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { migrate } from "drizzle-orm/libsql/migrator";
import { VERSION } from "../shared/version.js";
import { createApp } from "./app.js";
import { createBackground } from "./background.js";
import { appSettings, type ServerConfig } from "./config.js";
import type { Db, WrittenEvent } from "./db/client.js";
import { describeDbError } from "./db/db-errors.js";
import { expectedMigrations } from "./db/journal.js";
import { isFileDb, openDb } from "./db/open.js";
import { useSyncHash } from "./db/secrets.js";
import { ensureAdminToken } from "./db/tokens.js";
import type { AppDeps, DocsScript } from "./deps.js";
import { type FleetThreadOptions, keepFleetThread, startFleetThread } from "./fleet-thread/host.js";
import { limitHeapGrowth } from "./heap.js";
import { closeServer, listen } from "./http-server.js";
import type { Log } from "./log.js";
import { createClusterMetrics } from "./metrics/cluster.js";
import { newBeatHints } from "./nodes/beat-hints.js";
import { startLivenessSweep } from "./nodes/liveness.js";
import { readFleetAhead } from "./placement/read-ahead.js";
import { newPlacementCache } from "./placement/rows.js";
import { placeAndWake } from "./placement/trigger.js";
import { createPollHub } from "./poll-hub.js";
import { createRouter } from "./router/index.js";
import { waitForSchema } from "./schema-wait.js";
import { readTlsPair, reloadTls, type TlsFiles } from "./tls.js";

// this file runs from api/ in a checkout, or bundled into dist/: the package's root is one level up either way
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MIGRATIONS = resolve(ROOT, "migrations");
const DOCS_SCRIPT = resolve(ROOT, "dist", "public", "docs", "api-reference.js");
const FLEET_THREAD = resolve(dirname(fileURLToPath(import.meta.url)), "fleet-thread.js");

// on Node, tokens hash synchronously (the same SHA-256 as Web Crypto's, without its thread-pool round trip)
useSyncHash((secret) => createHash("sha256").update(secret).digest("hex"));

/** The API reference script and its gzipped copy: assets of the single binary, else files of the build. */
async function readDocsScript(path: string): Promise<[Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>]> {
  const sea = await import("node:sea").catch(() => undefined);
  if (sea?.isSea())
    return [new Uint8Array(sea.getAsset("api-reference.js")), new Uint8Array(sea.getAsset("api-reference.js.gz"))];
  return Promise.all([readFile(path), readFile(`${path}.gz`)]);
}

/** The built API reference script (and its gzipped copy), read on first use; undefined when it was not built. */
export function docsScriptReader(path = DOCS_SCRIPT): () => Promise<DocsScript | undefined> {
  let loaded: Promise<DocsScript | undefined> | undefined;
  return () =>
    (loaded ??= readDocsScript(path).then(
      ([plain, gzip]) => ({ plain, gzip, etag: `"${createHash("sha256").update(plain).digest("hex").slice(0, 16)}"` }),
      () => undefined,
    ));
}

/** Applies every pending migration from migrations/. */
export async function applyMigrations(db: Db) {
  await migrate(db, { migrationsFolder: MIGRATIONS });
}

/** How long a stopping server waits for its connections (parked long-polls are answered at once) before cutting them. */
export const SHUTDOWN_DEADLINE_MS = 1000;

/**
 * How often the poll watcher looks for nodes moved by other instances (a write on this one wakes its polls at once):
 * a few small indexed reads each time, against up to that long for a change placed elsewhere to reach its agents.
 */
const POLL_LOOK_MS = 250;

/** A listen failure in one line an operator can act on. */
function listenError(e: unknown, host: string, port: number): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  if (code === "EADDRINUSE")
    return new Error(`${where} is already in use (another process listens on it); choose another --port or LLMGW_PORT`);
  if (code === "EACCES") return new Error(`no permission to listen on ${where} (ports below 1024 need privileges)`);
  if (code === "EADDRNOTAVAIL")
    return new Error(`cannot listen on ${where}: ${host} is not an address of this machine`);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return new Error(`cannot listen on ${where}: ${host} does not resolve`);
  return e instanceof Error ? e : new Error(String(e));
}

export type Running = {
  url: string;
  port: number;
  close(): Promise<void>;
  /** Reads the certificate and key again (HTTPS only); resolves with why the old pair stays, else undefined. */
  reloadTls?(): Promise<string | undefined>;
};

/** An event's log fields: its type, node and the ids its data names. */
function eventFields(e: WrittenEvent): Record<string, unknown> {
  const { replica, shard, ...rest } = e.data ?? {};
  return {
    event: e.type,
    ...(e.nodeId ? { nodeId: e.nodeId } : {}),
    ...(typeof replica === "string" ? { replicaId: replica } : {}),
    ...(typeof shard === "string" ? { shardId: shard } : {}),
    ...rest,
  };
}

/**
 * The fleet thread kept running, when the build has one (dist/fleet-thread.js beside this file; not in the single
 * binary, nor when run from the sources): placement runs, the read ahead, the cluster gauges and the capacity then
 * keep off the serving event loop.
 */
async function keepFleetWork(
  config: ServerConfig,
  o: Omit<FleetThreadOptions, "onEnd">,
  stop: AbortSignal,
): Promise<ReturnType<typeof keepFleetThread> | undefined> {
  const sea = await import("node:sea").catch(() => undefined);
  if (sea?.isSea() || !existsSync(FLEET_THREAD)) return undefined;
  const { nodeLostAfterS, repairGraceS, repairMaxFraction } = appSettings(config);
  const threadConfig = {
    dbUrl: config.dbUrl,
    ...(config.dbAuthToken && { dbAuthToken: config.dbAuthToken }),
    dbSync: config.dbSync,
    settings: { nodeLostAfterS, repairGraceS, repairMaxFraction },
  };
  return keepFleetThread((onEnd) => startFleetThread(FLEET_THREAD, threadConfig, { ...o, onEnd }), {
    log: o.log,
    stop,
  });
}

/** Starts `llmgw serve` with a parsed configuration; resolves once it listens. */
export async function startServer(config: ServerConfig, log: Log, print: (line: string) => void): Promise<Running> {
  limitHeapGrowth(config.heapGrowthPercent);
  const tlsFiles: TlsFiles | undefined =
    config.tlsCert && config.tlsKey ? { certFile: config.tlsCert, keyFile: config.tlsKey } : undefined;
  // a bad pair is said before anything opens
  const tls = tlsFiles && (await readTlsPair(tlsFiles));
  const { client, db, store } = await openDb(config.dbUrl, config.dbAuthToken, config.dbSync);
  // every event a write stores (registration, a node lost or back, cordon, drain, repair, adoption …) is a log line
  const logEvents = (events: WrittenEvent[]) => {
    for (const e of events) log.info(e.message, eventFields(e));
  };
  store.onEvents?.(logEvents);
  if (isFileDb(config.dbUrl)) await applyMigrations(db);
  const now = () => Date.now();
  const stop = new AbortController();
  const adminTokenShown = (token: string | undefined) => {
    if (!token) return;
    print(`  admin token (shown once, on first start only; store it now):`);
    print(`    ${token}`);
  };
  const waiter = createPollHub(
    store,
    POLL_LOOK_MS,
    (e) => log.warn("assignment watcher", { error: describeDbError(e) }),
    stop.signal,
  );
  const background = createBackground();
  const routing = createRouter(store, {
    now,
    log,
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
  const placementCache = newPlacementCache();
  // started once the database is ready: until then placement and the gauges run on this thread
  let fleet: ReturnType<typeof keepFleetThread> | undefined;
  const cluster = createClusterMetrics(routing.registry, {
    db,
    now,
    lostAfterS: config.nodeLostAfterS,
    log,
    placementCache,
    scrape: (at) => fleet?.current()?.scrape(at),
  });
  const deps: AppDeps = {
    store,
    now,
    log,
    settings: appSettings(config),
    migrations: expectedMigrations,
    waiter,
    background: background.run,
    placementCache,
    place: (at, pace) => fleet?.current()?.place(at, pace),
    capacity: (at) => fleet?.current()?.capacity(at),
    beatHints: newBeatHints(),
    router: routing.router,
    metricsText: () => cluster.text(),
    observePlacement: cluster.observePlacement,
    docsScript: docsScriptReader(),
  };
  const app = createApp(deps);

  // nothing runs against the database before the port is ours: a second instance on a taken port only says so
  const server = listen(app, routing.handler, config.host, config.port, tls);
  const port = await new Promise<number>((ok, fail) => {
    server.once("listening", () => ok((server.address() as { port: number }).port));
    server.once("error", fail);
  }).catch(async (e: unknown) => {
    stop.abort();
    await routing.close().catch(() => undefined);
    client.close();
    throw listenError(e, config.host, config.port);
  });
  const place = () => placeAndWake(deps, "a liveness sweep");
  startLivenessSweep(
    { store, now, log },
    {
      intervalS: config.sweepIntervalS,
      lostAfterS: config.nodeLostAfterS,
      graceS: config.repairGraceS,
      retentionDays: config.eventsRetentionDays,
      place,
    },
    stop.signal,
  );
  // A remote database is migrated out of band (`llmgw migrate`): until then /readyz fails and start-up waits for it.
  // "serving on" is said once the admin token works, unless the database makes us wait (then /readyz says why)
  let waiting = () => {};
  const schemaReady = waitForSchema(db, log, stop.signal, () => waiting()).then(() =>
    ensureAdminToken(store, now(), config.adminToken),
  );
  await new Promise<void>((settled) => {
    waiting = settled;
    schemaReady.then(
      () => settled(),
      () => settled(),
    );
  });
  const shown = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const url = `${tls ? "https" : "http"}://${shown.includes(":") ? `[${shown}]` : shown}:${port}`;
  print(`llmgw ${VERSION} serving on ${url} (database ${config.dbUrl.replace(/\/\/[^@/]*@/, "//***@")})`);
  print(`  console:   ${url}/admin`);
  print(`  API docs:  ${url}/docs`);
  print(`  OpenAPI:   ${url}/openapi.json`);
  schemaReady.then(adminTokenShown, (e: unknown) => {
    if (!stop.signal.aborted) log.error("could not create the admin token", { error: describeDbError(e) });
  });
  // the fleet thread reads ahead for its own cache; without one, this thread does
  background.run(
    schemaReady.then(async () => {
      if (stop.signal.aborted) return;
      fleet = await keepFleetWork(config, { store, log, onEvents: logEvents }, stop.signal);
      if (!fleet) await readFleetAhead(db, placementCache, log, stop.signal);
    }),
  );
  return {
    url,
    port,
    ...(tlsFiles && "setSecureContext" in server ? { reloadTls: () => reloadTls(server, tlsFiles) } : {}),
    // parked long-polls answer at once (the hub's stop), idle connections close, the rest is cut at the deadline
    close: async () => {
      stop.abort();
      await closeServer(server, SHUTDOWN_DEADLINE_MS);
      await background.drain();
      await fleet?.close();
      await routing.close();
      client.close();
    },
  };
}
