import { VERSION } from "../shared/version.js";
import { z } from "../shared/z.js";
import type { AppSettings } from "./deps.js";

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * Subrequests a long-poll on a Worker keeps for what it does besides waiting: authentication, the placement that runs
 * on every poll (its generation check, and a write transaction when the cluster changed) and reading the assignments.
 * The rest of the plan's budget (LLMGW_WORKER_SUBREQUESTS) goes to re-reading the node's row while it waits; the
 * Worker's end-to-end test counts both (docs/deploy.md has the figures).
 */
export const POLL_RESERVED_SUBREQUESTS = 30;

/** Every setting of `llmgw serve`, from LLMGW_* variables and flags (flags win). */
export const ServerConfig = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: int(0, 65535).default(8080),
  dbUrl: z
    .string()
    .regex(/^(file:|libsql:|https?:|wss?:)/, "a file: path or a libsql:, http(s): or ws(s): URL")
    .default("file:./data/llmgw.db"),
  dbAuthToken: z.string().min(1).optional(),
  /** The embedded file's durability: `normal` syncs its log at checkpoints, `full` at every commit. */
  dbSync: z.enum(["normal", "full"]).default("normal"),
  /**
   * How far (%) the JavaScript heap may grow past what the last full collection found live before the next one
   * (api/heap.ts); 0 leaves it to V8, which lets it grow two to four times.
   */
  heapGrowthPercent: int(0, 1000).default(30),
  adminToken: z.string().min(24, "at least 24 characters").max(256).optional(),
  nodeLostAfterS: int(10, 86400).default(180),
  heartbeatIntervalS: int(1, 3600).default(60),
  pollWaitS: int(1, 60).default(50),
  sweepIntervalS: int(1, 3600).default(15),
  maxBodyBytes: int(1024, 64 * 1024 * 1024).default(2 * 1024 * 1024),
  repairGraceS: int(0, 86400).default(300),
  repairMaxFraction: z.coerce.number().gt(0).max(1).default(0.2),
  eventsRetentionDays: int(1, 36500).default(90),
  routerConnectTimeoutS: z.coerce.number().gt(0).max(600).default(5),
  routerFirstByteTimeoutS: z.coerce.number().gt(0).max(86400).default(600),
  routerIdleTimeoutS: z.coerce.number().gt(0).max(86400).default(120),
  routerMaxAttempts: int(1, 10).default(3),
  routerMaxRequestBytes: int(1024, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
  /** A model's requests in flight per ready replica, per API instance, before more wait in the fair queue. */
  routerMaxInflightPerReplica: int(1, 1_000_000).default(64),
  /** How long a request waits in the fair queue for a slot before its 429 (0: it is refused at once). */
  routerQueueTimeoutS: z.coerce.number().min(0).max(3600).default(30),
  metricsToken: z.string().min(16, "at least 16 characters").max(256).regex(/^\S+$/, "no spaces").optional(),
  /** PEM certificate chain and private key: both set, the server speaks HTTPS (and reloads them on SIGHUP). */
  tlsCert: z.string().min(1).optional(),
  tlsKey: z.string().min(1).optional(),
  /** Workers only: the subrequests a request may make on the account's plan (Free 50, Paid 10,000 by default). */
  // at least 10 re-reads left to wait with
  workerSubrequests: int(POLL_RESERVED_SUBREQUESTS + 10, 10_000_000).default(50),
});
export type ServerConfig = z.infer<typeof ServerConfig>;

const ENV: Record<keyof ServerConfig, string> = {
  host: "LLMGW_HOST",
  port: "LLMGW_PORT",
  dbUrl: "LLMGW_DB_URL",
  dbAuthToken: "LLMGW_DB_AUTH_TOKEN",
  dbSync: "LLMGW_DB_SYNC",
  heapGrowthPercent: "LLMGW_HEAP_GROWTH_PERCENT",
  adminToken: "LLMGW_ADMIN_TOKEN",
  nodeLostAfterS: "LLMGW_NODE_LOST_AFTER_S",
  heartbeatIntervalS: "LLMGW_HEARTBEAT_INTERVAL_S",
  pollWaitS: "LLMGW_POLL_WAIT_S",
  sweepIntervalS: "LLMGW_SWEEP_INTERVAL_S",
  maxBodyBytes: "LLMGW_MAX_BODY_BYTES",
  repairGraceS: "LLMGW_REPAIR_GRACE_S",
  repairMaxFraction: "LLMGW_REPAIR_MAX_FRACTION",
  eventsRetentionDays: "LLMGW_EVENTS_RETENTION_DAYS",
  routerConnectTimeoutS: "LLMGW_ROUTER_CONNECT_TIMEOUT_S",
  routerFirstByteTimeoutS: "LLMGW_ROUTER_FIRST_BYTE_TIMEOUT_S",
  routerIdleTimeoutS: "LLMGW_ROUTER_IDLE_TIMEOUT_S",
  routerMaxAttempts: "LLMGW_ROUTER_MAX_ATTEMPTS",
  routerMaxRequestBytes: "LLMGW_ROUTER_MAX_REQUEST_BYTES",
  routerMaxInflightPerReplica: "LLMGW_ROUTER_MAX_INFLIGHT_PER_REPLICA",
  routerQueueTimeoutS: "LLMGW_ROUTER_QUEUE_TIMEOUT_S",
  metricsToken: "LLMGW_METRICS_TOKEN",
  tlsCert: "LLMGW_TLS_CERT",
  tlsKey: "LLMGW_TLS_KEY",
  workerSubrequests: "LLMGW_WORKER_SUBREQUESTS",
};
const SECRETS = new Set(["adminToken", "dbAuthToken", "metricsToken"]);
/** Variables other llmgw commands read (the CLI clients), not unknown to `serve`. */
// the CLI's, and the logger's of every process (shared/log-node.ts)
const CLIENT_VARS = new Set(["LLMGW_SERVER", "LLMGW_TOKEN", "LLMGW_CA_FILE", "LLMGW_LOG_FORMAT", "LLMGW_LOG_LEVEL"]);

export type ServerFlags = { host?: string; port?: string; db?: string; tlsCert?: string; tlsKey?: string };

/** `--db ./x.db` or `--db file:x.db` or a URL: a bare path becomes a file: URL. */
export function dbUrlFromFlag(db: string): string {
  return /^[a-z]+:/i.test(db) ? db : `file:${db}`;
}

export type ConfigResult = { ok: true; config: ServerConfig; warnings: string[] } | { ok: false; errors: string[] };

/** Reads the server's configuration; on failure, every invalid value is listed by the name the user set it with. */
export function loadServerConfig(env: Record<string, string | undefined>, flags: ServerFlags = {}): ConfigResult {
  const raw: Record<string, unknown> = {};
  const source: Record<string, string> = {};
  for (const [key, name] of Object.entries(ENV)) {
    const v = env[name];
    if (v !== undefined && v !== "") {
      raw[key] = v;
      source[key] = name;
    }
  }
  const fromFlags: [keyof ServerConfig, string, string | undefined][] = [
    ["host", "--host", flags.host],
    ["port", "--port", flags.port],
    ["dbUrl", "--db", flags.db === undefined ? undefined : dbUrlFromFlag(flags.db)],
    ["tlsCert", "--tls-cert", flags.tlsCert],
    ["tlsKey", "--tls-key", flags.tlsKey],
  ];
  for (const [key, flag, value] of fromFlags) {
    if (value === undefined) continue;
    raw[key] = value;
    source[key] = flag;
  }
  const known = new Set(Object.values(ENV));
  const warnings = Object.keys(env)
    .filter((k) => k.startsWith("LLMGW_") && !known.has(k) && !CLIENT_VARS.has(k))
    .map((k) => `${k} is not a setting of llmgw serve and is ignored`);
  const parsed = ServerConfig.safeParse(raw);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((i) => {
      const key = String(i.path[0]);
      // a secret's value never goes to the log, even a wrong one
      const got = SECRETS.has(key) ? "" : ` (got ${JSON.stringify(raw[key])})`;
      return `${source[key] ?? ENV[key as keyof ServerConfig] ?? key}: ${i.message}${got}`;
    });
    return { ok: false, errors };
  }
  // one without the other would serve plain HTTP while the operator believes it is HTTPS
  if (!parsed.data.tlsCert !== !parsed.data.tlsKey) {
    const [set, unset] = parsed.data.tlsCert ? ["tlsCert", "tlsKey"] : ["tlsKey", "tlsCert"];
    const name = (k: string) =>
      source[k] ?? `${k === "tlsCert" ? "--tls-cert" : "--tls-key"} / ${ENV[k as keyof ServerConfig]}`;
    return {
      ok: false,
      errors: [`${name(set)} is set but ${name(unset)} is not: HTTPS needs both, or neither for HTTP`],
    };
  }
  return { ok: true, config: parsed.data, warnings };
}

/** The part of the configuration the app reads on requests. */
export function appSettings(config: ServerConfig): AppSettings {
  const { nodeLostAfterS, heartbeatIntervalS, pollWaitS, maxBodyBytes, repairGraceS, repairMaxFraction, metricsToken } =
    config;
  return {
    version: VERSION,
    nodeLostAfterS,
    heartbeatIntervalS,
    pollWaitS,
    maxBodyBytes,
    repairGraceS,
    repairMaxFraction,
    ...(metricsToken ? { metricsToken } : {}),
  };
}
