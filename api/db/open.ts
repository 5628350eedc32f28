// Opening the database on Node (serve, the fleet thread, the tools): a file gets its directory, WAL mode and this
// process's statement cache; a server its batched reads and kept write streams.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { createStore, type Db, type Store } from "./client.js";
import { cacheStatements, type DbSync, setDbSync } from "./local-connections.js";
import { serverClient } from "./read-batches.js";
import * as schema from "./schema.js";

/** True for an embedded database file (as opposed to a libSQL server). */
export const isFileDb = (url: string) => url.startsWith("file:");

/**
 * Opens the database; a file database gets its directory, WAL mode, a busy timeout, statements prepared once per
 * connection and the durability `sync` says (api/db/local-connections.ts).
 */
export async function openDb(
  url: string,
  authToken?: string,
  sync: DbSync = "normal",
): Promise<{ client: Client; db: Db; store: Store }> {
  const file = isFileDb(url);
  if (file) {
    const path = url.slice("file:".length).split("?")[0]!;
    if (path && path !== ":memory:") mkdirSync(dirname(resolve(path)), { recursive: true });
    setDbSync(sync);
    cacheStatements();
  }
  const opened = createClient({ url, authToken, timeout: 5000 });
  // on a server, each statement outside a transaction costs it a connection: reads made together share one batch,
  // and over WebSocket the batches and the agents' statement writes go on streams kept open
  const { client, streams } = file ? { client: opened } : serverClient(opened, url, authToken, setImmediate);
  if (file) await client.execute("PRAGMA journal_mode=WAL");
  const db = drizzle(client, { schema });
  return { client, db, store: createStore(db, { serialize: true, file, streams }) };
}
