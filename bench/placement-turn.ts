// How long placement holds the instance's write turn — what heartbeats and status reports arriving during a change wait
// for — at fleet size: 10,000 nodes (bench/fleet.ts's seed), a deployment of 8-GPU replicas placed at 1,000, scaled to
// 1,500, released to 0, placed at 1,000 again, through the real app on a file database. Each step once with the
// decision made in the write transaction (the serving thread's way, and every run on a libSQL server) and once decided
// before it (the fleet thread's on the file), on copies of the same seeded database; three rounds, medians. With
// --sqld the same on one libSQL server (sqld, over ws://, as three instances share one in bench/fleet.ts): one seed,
// the steps run in turn by each way, each round ending with the deployment released (not timed).
// Run: npx tsx bench/placement-turn.ts [--rounds 3] [--sqld]
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApp } from "../api/app.js";
import { createBackground } from "../api/background.js";
import { appSettings, ServerConfig } from "../api/config.js";
import type { Store } from "../api/db/client.js";
import { expectedMigrations } from "../api/db/journal.js";
import { openDb } from "../api/db/open.js";
import { ensureAdminToken } from "../api/db/tokens.js";
import { type PlaceHow, placeIfNeeded } from "../api/placement/apply.js";
import { newPlacementCache, warmPlacementCache } from "../api/placement/rows.js";
import { createPollHub } from "../api/poll-hub.js";
import { startSqld } from "../test/helpers/instances.js";
import { seedNodes } from "./fleet-seed.js";
import { machine, median } from "./machine.js";

const { values: args } = parseArgs({
  options: { rounds: { type: "string", default: "3" }, sqld: { type: "boolean", default: false } },
});
const ROUNDS = Number(args.rounds);
const NODES = 10_000;
const STEPS = [1000, 1500, 0, 1000];

const dir = mkdtempSync(join(tmpdir(), "llmgw-turn-"));
const seed = join(dir, "seed.db");
const server = args.sqld ? await startSqld() : undefined;
const seedUrl = server ? server.url.replace("http:", "ws:") : `file:${seed}`;
console.log(`machine: ${machine()}`);
console.log(
  `fleet: ${NODES} nodes seeded in ${(await seedNodes(seedUrl, NODES)).toFixed(1)} s ${server ? "on sqld (ws://)" : "on a file"}`,
);

/**
 * One round — on a fresh copy of the seed, or on the server's one database — per step, the write turns' total and
 * the run's (PUT to placed), in ms.
 */
async function round(how: PlaceHow, n: number): Promise<{ turn: number; total: number }[]> {
  const file = join(dir, `run-${n}.db`);
  if (!server) copyFileSync(seed, file);
  const { client, db, store } = await openDb(server ? seedUrl : `file:${file}`);
  const now = Date.now();
  await client.execute({ sql: "update nodes set last_heartbeat_at = ?, last_seen_at = ?", args: [now, now] });
  const admin = "llmgw-bench-placement-turn-admin";
  await ensureAdminToken(store, now, admin);
  const cache = newPlacementCache();
  await warmPlacementCache(db, cache); // as the fleet thread's read at start-up
  let turn = 0;
  const timed: Store = {
    ...store,
    write: async (fn) => {
      const began = performance.now();
      try {
        return await store.write(fn);
      } finally {
        turn += performance.now() - began;
      }
    },
  };
  const settings = appSettings(ServerConfig.parse({}));
  const background = createBackground();
  const app = createApp({
    store,
    now: Date.now,
    log: { info() {}, warn() {}, error() {} },
    settings,
    migrations: expectedMigrations,
    waiter: createPollHub(store),
    background: background.run,
    placementCache: cache,
    place: (at) => placeIfNeeded(timed, at, settings, cache, how),
  });
  const put = async (path: string, spec: object) => {
    const r = await app.request(path, {
      method: "PUT",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ spec }),
    });
    if (r.status >= 300) throw new Error(`PUT ${path}: ${r.status} ${await r.text()}`);
    await background.drain();
  };
  if (n === 0 || !server)
    await put("/api/v1/models/m", {
      weightsPath: "/models/m",
      profiles: [{ name: "tp8", engine: "vllm", gpuClass: "h100-80g", tp: 8, gpusPerNode: 8 }],
    });
  const out: { turn: number; total: number }[] = [];
  for (const replicas of STEPS) {
    turn = 0;
    const began = performance.now();
    await put("/api/v1/deployments/d", { model: "m", replicas, pool: "prod" });
    out.push({ turn, total: performance.now() - began });
  }
  // the server's one database starts the next round with nothing placed
  if (server) await put("/api/v1/deployments/d", { model: "m", replicas: 0, pool: "prod" });
  client.close();
  return out;
}

const modes: [string, PlaceHow][] = [
  ["decided in the transaction", { readFirst: true }],
  ["decided before it", { readFirst: true, decideFirst: true }],
];
const figures = new Map<string, { turn: number; total: number }[][]>(modes.map(([name]) => [name, []]));
let copies = 0;
for (let r = 0; r < ROUNDS; r++) for (const [name, how] of modes) figures.get(name)!.push(await round(how, copies++));
rmSync(dir, { recursive: true, force: true });
await server?.close();

const ms = (x: number) => x.toFixed(0);
const summary: Record<string, number> = {};
for (const [name] of modes) {
  const runs = figures.get(name)!;
  const at = (i: number, k: "turn" | "total") => median(runs.map((x) => x[i]![k]));
  const steps = STEPS.map((replicas, i) => `→ ${replicas}: turn ${ms(at(i, "turn"))} ms of ${ms(at(i, "total"))} ms`);
  console.log(`${name} (median of ${ROUNDS}): ${steps.join("; ")}`);
  summary[name] = at(0, "turn");
}
console.log(
  `placement turn: replicas=1000 nodes=${NODES} in_tx_ms=${ms(summary[modes[0]![0]]!)} decide_first_ms=${ms(summary[modes[1]![0]]!)}`,
);
