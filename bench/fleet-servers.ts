// The control plane under bench/fleet.ts: one `llmgw serve` (the built CLI) on the embedded file database, or several
// on one libSQL server (sqld, migrated with `llmgw migrate` first) — each with the event-loop probe preloaded
// (fleet-loop-probe.mjs) — and what the benchmark reads about their processes: CPU time and RSS from /proc, the
// probe's windows, /metrics.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startSqld } from "../test/helpers/instances.js";
import { LLMGW, type Proc, start, stop, until } from "../test/helpers/process.js";
import { requireCurrentDist } from "./dist-check.js";

const PROBE = join(import.meta.dirname, "fleet-loop-probe.mjs");
const TICK_MS = 1000 / 100; // USER_HZ: /proc's clock ticks are 1/100 s on Linux

export type Instance = { url: string; port: number; pid: number; proc: Proc; loopFile: string };
export type Servers = { instances: Instance[]; sqld?: Proc; close(): Promise<void> };
export type ServersOptions = {
  count: number;
  dir: string;
  adminToken: string;
  scheme: "ws" | "http";
  /** sqld's WAL (docs/deploy.md): `libsql-wal` (--use-custom-wal), or its default one. */
  wal: "libsql-wal" | "default";
  /** Where each serve writes a V8 CPU profile when it exits (node --cpu-prof). */
  cpuProfDir?: string;
  /** NODE_OPTIONS for the serve processes (a V8 flag to try, e.g. --max-semi-space-size=32; none by default). */
  nodeOptions?: string;
  /** serve's LLMGW_LOG_LEVEL (warn when absent). */
  logLevel?: string;
  /** Runs on the (migrated, for sqld) database before any serve starts. */
  beforeServe?: (dbUrl: string) => Promise<void>;
};
/** A window of the probe (ms past the 10 ms timer). */
export type LoopWindow = {
  p50: number;
  p99: number;
  max: number;
  mean: number;
  count: number;
  heapUsedMb?: number;
  heapTotalMb?: number;
  externalMb?: number;
  /** Garbage collections in the window: scavenges (young) and the others (mark-compacts and their steps). */
  gc?: Record<"young" | "full", { n: number; ms: number; maxMs: number }>;
  /**
   * Inside serve: heartbeats and status reports from their headers parsed to their answer's last byte, and a new
   * connection's wait from its accept to its first request's headers (ms).
   */
  calls?: Record<"heartbeat" | "status" | "firstRequest", { n: number; p50: number; p99: number; max: number }>;
};

/** Stops a process within `ms` (SIGTERM, then SIGKILL). */
async function halt(p: Proc, ms = 5000) {
  const t = setTimeout(() => p.child.kill("SIGKILL"), ms);
  await stop(p);
  clearTimeout(t);
}

/** Starts sqld when `count` > 1, then `count` serve processes; resolves once every one answers /readyz. */
export async function startServers(o: ServersOptions): Promise<Servers> {
  requireCurrentDist();
  const server =
    o.count > 1
      ? await startSqld({
          args: [
            // its defaults (128 of each, and throttling under load) answer a fleet's traffic 429 Too Many Requests
            "--max-concurrent-connections",
            "4096",
            "--max-concurrent-requests",
            "4096",
            "--disable-intelligent-throttling",
            ...(o.wal === "libsql-wal" ? ["--use-custom-wal", "libsql-wal"] : []),
          ],
        })
      : undefined;
  const dbUrl = server ? server.url.replace("http:", `${o.scheme}:`) : `file:${join(o.dir, "llmgw.db")}`;
  const instances: Instance[] = [];
  const servers: Servers = {
    instances,
    sqld: server?.sqld,
    async close() {
      // a CPU profile is written as the process exits: give it the time
      await Promise.all(instances.map((i) => halt(i.proc, o.cpuProfDir ? 60_000 : 5000)));
      if (server) {
        // a server stuck in its write-lock hand-off may not stop when asked
        await halt(server.sqld);
        await server.close();
      }
    },
  };
  try {
    await o.beforeServe?.(dbUrl);
    for (let n = 0; n < o.count; n++) {
      const loopFile = join(o.dir, `loop-${n}.json`);
      const prof = o.cpuProfDir ? ["--cpu-prof", "--cpu-prof-dir", o.cpuProfDir] : [];
      const proc = start(process.execPath, [...prof, "--import", PROBE, LLMGW, "serve", "--port", "0"], {
        env: {
          ...(o.nodeOptions ? { NODE_OPTIONS: o.nodeOptions } : {}),
          LLMGW_DB_URL: dbUrl,
          LLMGW_ADMIN_TOKEN: o.adminToken,
          LLMGW_LOG_LEVEL: o.logLevel ?? "warn",
          LLMGW_LOG_FORMAT: "json",
          FLEET_LOOP_FILE: loopFile,
        },
      });
      const m = await proc.waitFor(/serving on (https?:\/\/\S+)/, 60_000);
      instances.push({ url: m[1]!, port: Number(new URL(m[1]!).port), pid: proc.child.pid!, proc, loopFile });
    }
    for (const i of instances) await until(async () => (await fetch(`${i.url}/readyz`)).ok, 30_000, "readyz");
  } catch (e) {
    await servers.close();
    throw e;
  }
  return servers;
}

/** A process's CPU time so far (ms), its resident memory now and at its peak (MiB). */
export function procStat(pid: number): { cpuMs: number; rssMb: number; peakMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // the fields after "pid (comm) ": state is the first, utime the 12th, stime the 13th
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? NaN);
  return {
    cpuMs: (Number(f[11]) + Number(f[12])) * TICK_MS,
    rssMb: kb("VmRSS") / 1024,
    peakMb: kb("VmHWM") / 1024,
  };
}

const readLoop = (file: string) =>
  existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as LoopWindow & { seq: number }) : undefined;

/** Closes the probe's current window in `i` and returns it (undefined if the probe did not answer in 10 s). */
export async function loopWindow(i: Instance): Promise<LoopWindow | undefined> {
  const before = readLoop(i.loopFile)?.seq ?? 0;
  process.kill(i.pid, "SIGUSR2");
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    const w = readLoop(i.loopFile);
    if (w && w.seq > before) return w;
    await new Promise((ok) => setTimeout(ok, 20));
  }
  return undefined;
}

/** Samples named `names` in a Prometheus text exposition (label sets summed). */
export function metricValues(text: string, names: string[]): Record<string, number | undefined> {
  const out: Record<string, number | undefined> = {};
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && names.includes(m[1]!)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[3]);
  }
  return out;
}

/** Log lines a serve printed at warn or above, by message and error, most frequent first. */
export function warnings(p: Proc): [string, number][] {
  const counts = new Map<string, number>();
  for (const line of p.output().split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const j = JSON.parse(line) as {
        level?: string;
        msg?: string;
        error?: unknown;
        cause?: unknown;
        causes?: unknown[];
      };
      // an unexpected error's own message often says only what failed; the last of its causes says why
      const why = j.causes?.at(-1) ?? j.error ?? j.cause;
      const key = `${j.msg ?? "?"}${why === undefined ? "" : ` (${String(typeof why === "string" ? why : JSON.stringify(why)).slice(0, 120)})`}`;
      if (j.level && j.level !== "info") counts.set(key, (counts.get(key) ?? 0) + 1);
    } catch {
      // a line that is not the logger's
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1]);
}

/** The network namespace's TCP counters that say connections waited: accept queues overflowed, SYNs sent again. */
export function tcpCounters(): { listenOverflows: number; synRetrans: number } {
  const lines = readFileSync("/proc/net/netstat", "utf8").split("\n");
  const i = lines.findIndex((l) => l.startsWith("TcpExt:"));
  const names = lines[i]?.split(" ") ?? [];
  const values = lines[i + 1]?.split(" ") ?? [];
  const get = (name: string) => Number(values[names.indexOf(name)] ?? NaN);
  return { listenOverflows: get("ListenOverflows"), synRetrans: get("TCPSynRetrans") };
}

/** Connections waiting in the accept queue of the socket listening on 127.0.0.1:`port` (undefined when not found). */
export function acceptQueue(port: number): number | undefined {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n")) {
    const f = line.trim().split(/\s+/);
    // a listening socket's rx_queue is its accept queue's length
    if (f[1] === local && f[3] === "0A") return Number.parseInt(f[4]!.split(":")[1]!, 16);
  }
  return undefined;
}

/** A line on sqld having exited during the run (with what it said went wrong), or undefined while it runs. */
export function sqldExited(servers: Servers): string | undefined {
  const sqld = servers.sqld;
  const c = sqld?.child;
  if (!sqld || !c || (c.exitCode === null && c.signalCode === null)) return undefined;
  const out = sqld.output();
  const errors = out
    .split("\n")
    .filter((l) => /panicked|^\S.*(error|Error)/.test(l))
    .slice(0, 4)
    .join(" | ");
  return `sqld exited during the run (${c.exitCode ?? c.signalCode}): ${errors || out.slice(-500)}`;
}
