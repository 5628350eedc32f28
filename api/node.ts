// The Node entry: opens the database, migrates an embedded one, ensures an admin token, serves the app.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { createClient, type Client } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import { eq } from "drizzle-orm";
import { createApp } from "./app.js";
import type { ServerConfig } from "./config.js";
import { createStore, type Db, type Store } from "./db/client.js";
import { expectedMigrations } from "./db/journal.js";
import { migrationStatus } from "./db/migration-status.js";
import * as schema from "./db/schema.js";
import { countAdminTokens, insertAdminToken } from "./db/tokens.js";
import type { Log } from "./deps.js";
import { startLivenessSweep } from "./liveness.js";
import { hashSecret } from "./secrets.js";
import { VERSION } from "../shared/version.js";


const MIGRATIONS = resolve(dirname(fileURLToPath(import.meta.url)), "../migrations");

/** True for an embedded database file (as opposed to a libSQL server). */
export const isFileDb = (url: string) => url.startsWith("file:");

/** Opens the database; a file database gets its directory, WAL mode and a busy timeout. */
export async function openDb(url: string, authToken?: string): Promise<{ client: Client; db: Db; store: Store }> {
  if (isFileDb(url)) {
    const path = url.slice("file:".length).split("?")[0]!;
    if (path && path !== ":memory:") mkdirSync(dirname(resolve(path)), { recursive: true });
  }
  const client = createClient({ url, authToken, timeout: 5000 });
  if (isFileDb(url)) await client.execute("PRAGMA journal_mode=WAL");
  const db = drizzle(client, { schema });
  return { client, db, store: createStore(db, isFileDb(url)) };
}

/** Applies every pending migration from migrations/. */
export async function applyMigrations(db: Db) {
  await migrate(db, { migrationsFolder: MIGRATIONS });
}

/** Makes sure an admin token exists: LLMGW_ADMIN_TOKEN if given, else one generated on first start (returned once). */
export async function ensureAdminToken(store: Store, now: number, fromEnv?: string): Promise<string | undefined> {
  return store.write(async (tx) => {
    if (fromEnv) {
      const hash = await hashSecret(fromEnv);
      const [found] = await tx.select().from(schema.adminTokens).where(eq(schema.adminTokens.hash, hash));
      if (!found) await insertAdminToken(tx, "LLMGW_ADMIN_TOKEN", now, fromEnv);
      return undefined;
    }
    if ((await countAdminTokens(tx)) > 0) return undefined;
    return (await insertAdminToken(tx, "first-start", now)).secret;
  });
}

export type Running = { url: string; port: number; close(): Promise<void> };

/** Starts `llmgw serve` with a parsed configuration; resolves once it listens. */
export async function startServer(config: ServerConfig, log: Log, print: (line: string) => void): Promise<Running> {
  const { client, db, store } = await openDb(config.dbUrl, config.dbAuthToken);
  if (isFileDb(config.dbUrl)) await applyMigrations(db);
  else {
    const m = await migrationStatus(db, expectedMigrations);
    if (!m.current) log.error(`database schema is behind this build (pending: ${m.pending.join(", ")}); run \`llmgw migrate\` — /readyz fails until then`);
  }
  const now = () => Date.now();
  const firstToken = await ensureAdminToken(store, now(), config.adminToken);
  const settings = {
    version: VERSION,
    nodeLostAfterS: config.nodeLostAfterS,
    heartbeatIntervalS: config.heartbeatIntervalS,
    pollWaitS: config.pollWaitS,
    maxBodyBytes: config.maxBodyBytes,
  };
  const app = createApp({ store, now, log, settings, migrations: expectedMigrations });
  const stop = new AbortController();
  startLivenessSweep({ store, now, log }, { intervalS: config.sweepIntervalS, lostAfterS: config.nodeLostAfterS }, stop.signal);

  const server = serve({ fetch: app.fetch, hostname: config.host, port: config.port });
  const port = await new Promise<number>((ok, fail) => {
    server.once("listening", () => ok((server.address() as { port: number }).port));
    server.once("error", fail);
  });
  const shown = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const url = `http://${shown.includes(":") ? `[${shown}]` : shown}:${port}`;
  print(`llmgw ${VERSION} serving on ${url} (database ${config.dbUrl.replace(/\/\/[^@/]*@/, "//***@")})`);
  print(`  API docs:  ${url}/docs`);
  print(`  OpenAPI:   ${url}/openapi.json`);
  if (firstToken) {
    print(`  admin token (shown once, on first start only; store it now):`);
    print(`    ${firstToken}`);
  }
  return {
    url,
    port,
    close: async () => {
      stop.abort();
      await new Promise<void>((ok) => server.close(() => ok()));
      client.close();
    },
  };
}
