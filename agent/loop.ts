// The long-running agent: long-poll → reconcile → report, with discovery and heartbeats on their own timer. No
// loop can die: each catches, logs one line, backs off with jitter and goes on. Aborting the signal (SIGTERM)
// stops the agent and leaves every engine running.
import type { Inventory } from "../shared/schemas/inventory.js";
import { ApiCallError, type Client } from "./client.js";
import { missingDevices } from "./heartbeat.js";
import { needsRegistration, type Session } from "./session.js";
import { type Backoff, backoffMs } from "./supervisor/backoff.js";
import type { Supervisor } from "./supervisor/reconcile.js";

export type LoopDeps = {
  nodeId: string;
  session: Session;
  client: Client;
  supervisor: Supervisor;
  discover: () => Promise<Inventory>;
  log: (line: string) => void;
  checkIntervalMs: number;
  reconcileIntervalMs?: number;
  backoff?: Backoff;
};

const RETRY: Backoff = { baseMs: 1000, maxMs: 30_000 };
const oneLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0];

/** Sleeps `ms`, or less when the signal aborts. */
export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((done) => {
    if (signal.aborted) return done();
    const t = setTimeout(finish, ms);
    function finish() {
      clearTimeout(t);
      signal.removeEventListener("abort", finish);
      done();
    }
    signal.addEventListener("abort", finish, { once: true });
  });

/** Runs the agent until `signal` aborts. */
export async function runLoop(d: LoopDeps, signal: AbortSignal): Promise<void> {
  const backoff = d.backoff ?? RETRY;
  let inv = await d.discover();
  let index = 0;
  const canRun = (s: Parameters<typeof missingDevices>[0]) => missingDevices(s, inv);

  /** Sends the shard transitions collected since the last call, in batches; keeps them for later on failure. */
  async function flush() {
    const reports = d.supervisor.takeReports();
    const token = d.session.token();
    if (!reports.length || !token) return d.supervisor.requeue(reports);
    try {
      for (let i = 0; i < reports.length; i += 256)
        await d.client.status(d.nodeId, { shards: reports.slice(i, i + 256) }, token);
    } catch (e) {
      d.supervisor.requeue(reports);
      if (needsRegistration(e)) d.session.invalidate();
      d.log(`status report failed (kept for the next try): ${oneLine(e)}`);
    }
  }

  async function polls() {
    let failures = 0;
    let first = true;
    while (!signal.aborted) {
      try {
        await d.session.sync(inv, d.supervisor.current(), d.supervisor.running(), { force: first });
        first = false;
        const a = await d.client.poll(d.nodeId, index, d.session.intervals().pollWaitS, d.session.token()!, signal);
        if (a.index < index)
          d.log(`assignment index went backwards (${index} → ${a.index}); following the control plane`);
        const moved = a.index !== index;
        index = a.index;
        d.supervisor.setDesired(a.shards, canRun);
        await d.supervisor.tick();
        if (moved)
          d.log(
            `assignments at index ${index}: ${a.shards.length} shard${a.shards.length === 1 ? "" : "s"} (${a.shards.map((s) => s.shardId).join(", ") || "none"})`,
          );
        await flush();
        failures = 0;
      } catch (e) {
        if (signal.aborted) break;
        if (needsRegistration(e)) d.session.invalidate();
        const wait = backoffMs(++failures, backoff);
        d.log(
          `${e instanceof ApiCallError ? "control plane" : "agent"}: ${oneLine(e)}; retrying in ${(wait / 1000).toFixed(1)} s`,
        );
        await sleep(wait, signal);
      }
    }
  }

  async function every(ms: number, what: string, fn: () => Promise<void>) {
    while (!signal.aborted) {
      await sleep(ms, signal);
      if (signal.aborted) break;
      try {
        await fn();
      } catch (e) {
        d.log(`${what}: ${oneLine(e)}`);
      }
    }
  }

  await Promise.all([
    polls(),
    every(d.reconcileIntervalMs ?? 1000, "reconcile", async () => {
      await d.supervisor.tick();
      await flush();
    }),
    every(d.checkIntervalMs, "discovery", async () => {
      inv = await d.discover();
      try {
        await d.session.sync(inv, d.supervisor.current(), d.supervisor.running());
      } catch (e) {
        if (needsRegistration(e)) d.session.invalidate();
        throw e;
      }
    }),
  ]);
  await flush().catch(() => undefined);
}
