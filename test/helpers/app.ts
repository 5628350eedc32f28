import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createApp } from "../../api/app.js";
import { createBackground } from "../../api/background.js";
import { appSettings, ServerConfig } from "../../api/config.js";
import type { Store } from "../../api/db/client.js";
import { expectedMigrations } from "../../api/db/journal.js";
import { openDb } from "../../api/db/open.js";
import { ensureAdminToken } from "../../api/db/tokens.js";
import type { AppDeps, AppSettings } from "../../api/deps.js";
import { startFleetThread } from "../../api/fleet-thread/host.js";
import { listen } from "../../api/http-server.js";
import type { Log } from "../../api/log.js";
import { applyMigrations } from "../../api/node.js";
import { type BeatHints, newBeatHints } from "../../api/nodes/beat-hints.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { type AssignmentWaiter, createPollHub } from "../../api/poll-hub.js";
import { tempDbUrl } from "./db.js";
import { nodeInventory, registerBody } from "./inventory.js";

/** The fleet thread's entry as the build makes it (the tests' global setup builds dist/ first). */
export const FLEET_THREAD = join(import.meta.dirname, "..", "..", "dist", "fleet-thread.js");

export const silentLog: Log = { info() {}, warn() {}, error() {} };

export type TestClock = { now: () => number; advance: (ms: number) => void; set: (ms: number) => void };

/** A clock tests move by hand. */
export function testClock(start = Date.UTC(2026, 10, 30, 12)): TestClock {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms), set: (ms) => (t = ms) };
}

/** The settings `llmgw serve` has with no configuration. */
export const defaultSettings = () => appSettings(ServerConfig.parse({}));

type Call = { token?: string; body?: unknown; headers?: Record<string, string> };

/** A fresh temp-file database with every migration applied; `close` closes it and removes its directory. */
export async function migratedDb() {
  const tmp = tempDbUrl();
  const opened = await openDb(tmp.url);
  await applyMigrations(opened.db);
  return {
    ...opened,
    url: tmp.url,
    close() {
      opened.client.close();
      tmp.cleanup();
    },
  };
}

/** A `wrapWaiter` that pushes onto `parked` the node of each poll that asks the hub to wait. */
export const recordParks =
  (parked: string[]) =>
  (hub: AssignmentWaiter): AssignmentWaiter => ({
    ...hub,
    wait(node, index, ms, signal) {
      parked.push(node);
      return hub.wait(node, index, ms, signal);
    },
  });

/** The app on a fresh, migrated temp-file database with one admin token, plus a small request helper. */
export async function createTestApp(
  opts: {
    settings?: Partial<AppSettings>;
    log?: Log;
    docsScript?: AppDeps["docsScript"];
    /** Stands between the app and its poll hub (to watch the waits). */
    wrapWaiter?: (hub: AssignmentWaiter) => AssignmentWaiter;
    /** Stands between the app and its database's store (to watch or interleave its writes). */
    wrapStore?: (store: Store) => Store;
    /** What the instance knows of the heartbeat facts applied to each node (fresh hints when absent). */
    beatHints?: BeatHints;
    /** Placement runs on a fleet thread (the built dist/fleet-thread.js), as `llmgw serve` runs it. */
    fleetThread?: boolean;
    /** Runs each placement instead of the app (to hold a run); answering undefined lets the app run it. */
    place?: AppDeps["place"];
  } = {},
) {
  const migrated = await migratedDb();
  const { db } = migrated;
  const store = opts.wrapStore?.(migrated.store) ?? migrated.store;
  const clock = testClock();
  const adminToken = (await ensureAdminToken(store, clock.now()))!;
  const settings: AppSettings = { ...defaultSettings(), ...opts.settings };
  const hub = createPollHub(store, 50);
  const waiter = opts.wrapWaiter?.(hub) ?? hub;
  const background = createBackground();
  const log = opts.log ?? silentLog;
  const thread = opts.fleetThread
    ? startFleetThread(
        FLEET_THREAD,
        { dbUrl: migrated.url, dbSync: "normal", settings },
        { store, log, onEvents: (e) => log.info("events", { events: e }) },
      )
    : undefined;
  const app = createApp({
    store,
    now: clock.now,
    log,
    settings,
    migrations: expectedMigrations,
    waiter,
    background: background.run,
    placementCache: newPlacementCache(),
    // looked up at each call, so that a test can watch them
    ...(thread && { place: (now: number) => thread.place(now), capacity: (now: number) => thread.capacity(now) }),
    ...(opts.place && { place: opts.place }),
    beatHints: opts.beatHints ?? newBeatHints(),
    docsScript: opts.docsScript,
  });

  async function call(method: string, path: string, c: Call = {}) {
    const headers: Record<string, string> = { ...c.headers };
    if (c.token) headers.authorization = `Bearer ${c.token}`;
    let body: string | undefined;
    if (c.body !== undefined) {
      body = typeof c.body === "string" ? c.body : JSON.stringify(c.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await app.request(path, { method, headers, body });
    const text = await res.text();
    const json = text && /json/.test(res.headers.get("content-type") ?? "") ? JSON.parse(text) : undefined;
    return { status: res.status, headers: res.headers, json, text };
  }

  return {
    app,
    store,
    db,
    /** The database's URL (a temp file). */
    url: migrated.url,
    clock,
    adminToken,
    call,
    admin: (method: string, path: string, c: Call = {}) => call(method, path, { token: adminToken, ...c }),
    /** Waits for placement started by the last writes, then closes the database. */
    settle: () => background.drain(),
    thread,
    close: async () => {
      await background.drain();
      await thread?.close();
      migrated.close();
    },
  };
}
export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

/**
 * Declares model `m` (one H100 per replica) and deployment `d` of `replicas` in pool `p` through `t`'s API, and waits
 * for the placement the writes start.
 */
export async function declareOneGpuDeployment(t: TestApp, replicas: number): Promise<void> {
  await t.admin("PUT", "/api/v1/models/m", {
    body: { spec: { weightsPath: "/m", profiles: [{ name: "one", engine: "vllm", gpuClass: "h100-80g" }] } },
  });
  await t.admin("PUT", "/api/v1/deployments/d", { body: { spec: { model: "m", replicas, pool: "p" } } });
  await t.settle();
}

/** Registers nodes `ids` through `t`'s API (admin token) in pool `pool`; resolves with each node's token by id. */
export async function registerNodes(
  t: TestApp,
  ids: readonly string[],
  pool = "p",
  inventoryOf = nodeInventory,
): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  for (const id of ids) {
    const r = await t.call("POST", "/api/v1/agents/register", {
      token: t.adminToken,
      body: { ...registerBody(id, inventoryOf(id)), labels: { pool } },
    });
    if (r.status >= 300) throw new Error(`registering ${id}: ${r.status} ${r.text}`);
    tokens.set(id, r.json.nodeToken);
  }
  return tokens;
}

/**
 * `t`'s app (or `app`, standing in front of it) served over real HTTP (Node's server, as `llmgw serve` runs it) on a
 * free port of 127.0.0.1; `close` closes `t` too.
 */
export async function serveOverHttp(
  t: TestApp,
  app: Parameters<typeof listen>[0] = t.app,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server = listen(app, undefined, "127.0.0.1", 0);
  await new Promise<void>((ok) => server.once("listening", () => ok()));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await t.close();
    },
  };
}
