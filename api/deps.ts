import type { Capacity } from "../shared/schemas/plan.js";
import type { Role } from "../shared/schemas/token.js";
import type { Store } from "./db/client.js";
import type { MigrationInfo } from "./db/journal.js";
import type { nodes } from "./db/schema.js";
import type { Log } from "./log.js";
import type { BeatHints } from "./nodes/beat-hints.js";
import type { PlaceResult } from "./placement/apply.js";
import type { PlacementCache } from "./placement/rows.js";
import type { AssignmentWaiter } from "./poll-hub.js";
import type { FetchRouter } from "./router/fetch-handler.js";
import type { RouterDeps } from "./router/types.js";

/** Settings the app reads on every request; the entries build them from their configuration. */
export type AppSettings = {
  version: string;
  nodeLostAfterS: number;
  heartbeatIntervalS: number;
  pollWaitS: number;
  maxBodyBytes: number;
  /** How long a lost node's replicas wait before they are re-placed elsewhere. */
  repairGraceS: number;
  /** Share of all replicas that may be re-placed per minute. */
  repairMaxFraction: number;
  /** When set, GET /metrics needs `Authorization: Bearer <it>` (LLMGW_METRICS_TOKEN). */
  metricsToken?: string;
};

/** Everything the app needs from outside; no module keeps state of its own. */
export type AppDeps = {
  store: Store;
  now: () => number;
  log: Log;
  settings: AppSettings;
  migrations: MigrationInfo;
  /** How waiting polls learn that their node's assignments moved (one watcher per instance on Node). */
  waiter: AssignmentWaiter;
  /** Keeps work going after the response on Node (tracked for shutdown); absent on Workers, which use waitUntil. */
  background?: (work: Promise<unknown>) => void;
  /** Facts placement derived from unchanged inventories, kept between placements (absent: derived every time). */
  placementCache?: PlacementCache;
  /**
   * Runs placement elsewhere than on this event loop (Node: the fleet thread, which keeps its own cache), `pace` as
   * placeIfNeeded's; absent or answering undefined: here.
   */
  place?: (now: number, pace?: number) => Promise<PlaceResult> | undefined;
  /** Reads the fleet's capacity elsewhere (Node: the fleet thread, with its cache); absent or answering undefined: here. */
  capacity?: (now: number) => Promise<Capacity> | undefined;
  /**
   * The heartbeat facts this instance saw applied, by node: a heartbeat tries its quick write only where they match
   * (absent: every heartbeat tries it first).
   */
  beatHints?: BeatHints;
  /** The OpenAI-compatible router's state on this instance (Node: its node:http handler serves /v1 before the app). */
  router?: RouterDeps;
  /**
   * The router on WHATWG Request/Response, mounted at /v1 (the Worker); absent with no router either: /v1 answers 503.
   */
  fetchRouter?: FetchRouter;
  /** Prometheus text for GET /metrics (absent: 404). */
  metricsText?: () => Promise<string>;
  /** The API reference's browser script for /docs (absent: the Worker serves it as a static asset). */
  docsScript?: () => Promise<DocsScript | undefined>;
  /** Told how long each placement run that changed the cluster's generation took (llmgw_placement_duration_seconds). */
  observePlacement?: (seconds: number) => void;
};

/**
 * The API reference's browser script, plain and gzipped (handed in by the entry; absent where it is a static asset).
 */
export type DocsScript = { plain: Uint8Array<ArrayBuffer>; gzip: Uint8Array<ArrayBuffer>; etag: string };

export type Principal =
  | { kind: "admin"; tokenId: string; tokenName?: string; role: Role }
  | { kind: "node"; nodeId: string; token: string }
  | { kind: "join"; hash: string };

/** What authentication reads of a node's row: what the agent routes need of it, nothing more (every call reads it). */
export type NodeAuthRow = Pick<
  typeof nodes.$inferSelect,
  "id" | "tokenHash" | "adminState" | "lastSeenAt" | "lostAt" | "mgmtAddr"
> & { assignIndex: number };

export type AppEnv = {
  Variables: {
    requestId: string;
    deps: AppDeps;
    principal: Principal;
    /** The calling node's row, as authentication read it (agent routes only). */
    node: NodeAuthRow;
    /** A long-poll answered outside the request chain (api/routes/held-poll.ts): its status once written. */
    held?: Promise<number>;
  };
};
