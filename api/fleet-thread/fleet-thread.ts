// The fleet thread's entry (a worker thread of `serve`, built to dist/fleet-thread.js): its own connection to the
// database and placement's cache; it runs placement when asked (each write transaction in the serving thread's turn,
// so that the instance's writes never race each other for the database's write lock), reads the fleet ahead of
// changes, computes the cluster gauges of /metrics and the fleet's capacity, and on a file database copies its
// write-ahead log into the file (checkpoint.ts).
import { parentPort, workerData } from "node:worker_threads";
import type { Store } from "../db/client.js";
import { isFileDb, openDb } from "../db/open.js";
import type { Log } from "../log.js";
import { scrapeCluster } from "../metrics/cluster-figures.js";
import { placeIfNeeded } from "../placement/apply.js";
import { readFleetAhead } from "../placement/read-ahead.js";
import { newPlacementCache } from "../placement/rows.js";
import { capacityFrom } from "../views/capacity.js";
import type { NvlinkCache } from "../views/nvlink.js";
import { keepCheckpointing } from "./checkpoint.js";
import type { HostSays, ThreadConfig, ThreadSays } from "./protocol.js";
import { fromThreadError, type ThreadError, toThreadError } from "./thread-error.js";

const port = parentPort;
if (!port) throw new Error("fleet-thread.js runs as a worker thread of `llmgw serve`");
const config = workerData as ThreadConfig;
const say = (m: ThreadSays) => port.postMessage(m);
const line =
  (level: "info" | "warn" | "error") =>
  (msg: string, extra?: object): void =>
    say({ kind: "log", level, msg, ...(extra && { extra }) });
const log: Log = { info: line("info"), warn: line("warn"), error: line("error") };

const { client, db, store: local } = await openDb(config.dbUrl, config.dbAuthToken, config.dbSync);
local.onEvents?.((events) => say({ kind: "events", events }));

let turns = 0;
const granted = new Map<number, (refused?: ThreadError) => void>();
/** Runs `fn` once the serving thread granted this thread its write turn; gives the turn back when it settles. */
async function inTurn<T>(fn: () => Promise<T>): Promise<T> {
  const turn = ++turns;
  await new Promise<void>((ok, fail) => {
    granted.set(turn, (refused) => (refused === undefined ? ok() : fail(fromThreadError(refused))));
    say({ kind: "turn", turn });
  });
  try {
    return await fn();
  } finally {
    const writeFailure = local.writeFailure?.();
    say({ kind: "turn-over", turn, ...(writeFailure && { writeFailure }) });
  }
}
const store: Store = {
  db,
  server: local.server,
  write: (fn) => inTurn(() => local.write(fn)),
  writeStatements: (stmts, stored) => inTurn(() => local.writeStatements(stmts, stored)),
};

const cache = newPlacementCache();
const nvlinkCache: NvlinkCache = new Map();
const stop = new AbortController();
const reading = readFleetAhead(db, cache, log, stop.signal);
if (isFileDb(config.dbUrl)) keepCheckpointing(client, { log, stop: stop.signal });

port.on("message", (m: HostSays) => {
  if (m.kind === "granted") {
    granted.get(m.turn)?.(m.refused);
    granted.delete(m.turn);
  } else if (m.kind === "stop") {
    stop.abort();
    void reading.finally(() => {
      client.close();
      port.close();
    });
  } else {
    const lostAfterS = config.settings.nodeLostAfterS;
    const work =
      m.kind === "place"
        ? placeIfNeeded(store, m.now, config.settings, cache, {
            readFirst: true,
            decideFirst: !store.server,
            ...(m.pace !== undefined && { pace: m.pace }),
          })
        : m.kind === "scrape"
          ? scrapeCluster(db, m.now, lostAfterS, cache, nvlinkCache)
          : capacityFrom(db, cache, m.now, lostAfterS);
    work.then(
      (value) => say({ kind: "answer", id: m.id, value }),
      (e: unknown) => say({ kind: "answer", id: m.id, error: toThreadError(e) }),
    );
  }
});
