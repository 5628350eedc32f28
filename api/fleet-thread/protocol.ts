// What `serve`'s two threads say to each other: the serving thread (HTTP, the router, the agents' calls) and the fleet
// thread, which holds placement's cache and runs what reads or plans the whole fleet — placement runs, the read ahead,
// the cluster gauges of /metrics, the fleet's capacity (GET /api/v1/plan, the console's overview and plan pages) — so
// that none of it stops the serving thread's event loop.
import type { WriteFailure, WrittenEvent } from "../db/client.js";
import type { DbSync } from "../db/local-connections.js";
import type { PlaceSettings } from "../placement/apply.js";
import type { ThreadError } from "./thread-error.js";

/** What the fleet thread is started with (its workerData). */
export type ThreadConfig = {
  dbUrl: string;
  dbAuthToken?: string;
  dbSync: DbSync;
  settings: PlaceSettings;
};

/** A piece of work the serving thread asks for; each is answered once, by its id. */
export type Ask = { id: number; kind: "place" | "scrape" | "capacity"; now: number; pace?: number };

/**
 * What the serving thread sends: work, a write turn granted (or refused, why), or stop (the thread closes its database
 * and ends).
 */
export type HostSays = Ask | { kind: "granted"; turn: number; refused?: ThreadError } | { kind: "stop" };

/** What the fleet thread sends. */
export type ThreadSays =
  /** The answer to an ask: its value (structured-cloned), or why it failed. */
  | { kind: "answer"; id: number; value?: unknown; error?: ThreadError }
  /**
   * The thread would write: it waits for `granted` with this number, and says `turn-over` once it committed (or
   * failed), with the last failure of its writes the storage caused (a full disk …) while readiness reports one.
   */
  | { kind: "turn"; turn: number }
  | { kind: "turn-over"; turn: number; writeFailure?: WriteFailure }
  /** A log line, written by the serving thread's log. */
  | { kind: "log"; level: "info" | "warn" | "error"; msg: string; extra?: object }
  /** The events one of its write transactions stored, once it committed. */
  | { kind: "events"; events: WrittenEvent[] };
