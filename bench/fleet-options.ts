// bench/fleet.ts's command line.
import { resolve } from "node:path";
import { parseArgs } from "node:util";

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
      preseed: { type: "boolean" },
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
    cpuProfDir: v["cpu-prof"] === undefined ? undefined : resolve(v["cpu-prof"]),
  };
}
