// bench/fleet.ts's command line.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { LOG_LEVELS } from "../shared/log-node.js";

/** The command line, checked before anything starts (a bad flag exits 2 with a message). */
export function options() {
  const { values: v } = parseArgs({
    options: {
      agents: { type: "string" },
      seconds: { type: "string" },
      instances: { type: "string" },
      procs: { type: "string" },
      replicas: { type: "string" },
      concurrency: { type: "string" },
      "sqld-scheme": { type: "string" },
      "sqld-wal": { type: "string" },
      "register-timeout": { type: "string" },
      "cpu-prof": { type: "string" },
      "agents-nice": { type: "string" },
      "serve-node-options": { type: "string" },
      "serve-log-level": { type: "string" },
      preseed: { type: "boolean" },
      "seen-ago": { type: "string" },
    },
  });
  const whole = (flag: string, x: string | undefined, dflt: number, min = 1) => {
    const n = x === undefined ? dflt : Number(x);
    if (x?.trim() === "" || !Number.isInteger(n) || n < min)
      throw new Error(`--${flag} wants a whole number from ${min} up, not ${JSON.stringify(x)}`);
    return n;
  };
  const agents = whole("agents", v.agents, 10_000);
  const instances = whole("instances", v.instances, 1);
  if (instances !== 1 && instances !== 3) throw new Error("--instances is 1 (file database) or 3 (sqld)");
  const scheme = v["sqld-scheme"] ?? "ws";
  if (scheme !== "ws" && scheme !== "http") throw new Error("--sqld-scheme is ws or http");
  const nice = v["agents-nice"] === undefined ? 0 : Number(v["agents-nice"]);
  if (!Number.isInteger(nice) || nice < -20 || nice > 19 || v["agents-nice"]?.trim() === "")
    throw new Error(`--agents-nice wants a whole number from -20 to 19, not ${JSON.stringify(v["agents-nice"])}`);
  if (v["seen-ago"] !== undefined && !v.preseed) throw new Error("--seen-ago goes with --preseed");
  const logLevel = v["serve-log-level"] ?? "warn";
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new Error(`--serve-log-level is one of ${LOG_LEVELS.join(", ")}`);
  const wal = v["sqld-wal"] ?? "libsql-wal";
  if (wal !== "libsql-wal" && wal !== "default") throw new Error("--sqld-wal is libsql-wal or default");
  return {
    agents,
    seconds: whole("seconds", v.seconds, 120),
    instances,
    procs: whole("procs", v.procs, 2),
    replicas: whole("replicas", v.replicas, Math.max(1, Math.round(agents / 10))),
    concurrency: whole("concurrency", v.concurrency, 50),
    scheme: scheme as "ws" | "http",
    /** sqld's WAL: its default one can stop every write for good once several connections wait for its lock. */
    wal: wal as "libsql-wal" | "default",
    /** Seconds registration may take before the run stops there and reports what it has. */
    registerTimeoutS: whole("register-timeout", v["register-timeout"], 1200),
    /** Nodes written to the database before serve starts instead of registered through the API. */
    preseed: !!v.preseed,
    /**
     * With --preseed: the nodes were last heard from this many seconds before serve starts (a control plane back after
     * an outage that long), rather than as they were written.
     */
    seenAgoS: whole("seen-ago", v["seen-ago"], 0, 0),
    /**
     * The agent processes' scheduling priority (nice; below 0 needs root): they stand for machines of their own, and
     * below 0 they read their answers when they arrive rather than when the API's processes leave them a core.
     */
    agentsNice: nice,
    /** NODE_OPTIONS for the serve processes (none by default: the environment's own). */
    serveNodeOptions: v["serve-node-options"],
    /**
     * serve's LLMGW_LOG_LEVEL: warn unless asked, so that what is measured is the API's work, not its access log's — at
     * serve's own default, info, it writes a line for every call (synchronously, to its stderr: a pipe read here).
     */
    serveLogLevel: logLevel,
    cpuProfDir: v["cpu-prof"] === undefined ? undefined : resolve(v["cpu-prof"]),
  };
}
