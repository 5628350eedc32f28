// The long-running agent: long-poll → reconcile → report, a heartbeat between two polls when one is due, and discovery
// on its own timer. No loop can die: each catches, logs one line, backs off with jitter and goes on. Aborting the
// signal (SIGTERM) stops the agent and leaves every engine running.
import type { Inventory } from "../shared/schemas/inventory.js";
import { ApiCallError, type Client, POLL_MARGIN_S } from "./client.js";
import { missingDevices } from "./heartbeat.js";
import { HeartbeatFailed, needsRegistration, type Session } from "./session.js";
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
  /** The least time from one poll's start to the next, whatever the answer (default 1 s). */
  minPollIntervalMs?: number;
  /** The clock that paces polls (Date.now unless a test gives one). */
  now?: () => number;
};

const RETRY: Backoff = { baseMs: 1000, maxMs: 30_000 };
// A long-poll normally waits for a change; one answered at once (the first, one after a change, or a control plane
// that does not wait) is followed by the next no sooner than this, so that an answering server never makes a spin.
const MIN_POLL_INTERVAL_MS = 1000;
// Heartbeats ride the poll loop: one due within this share of the interval is sent before the next poll, on the
// connection the last answer freed (the API answers a long-poll after 90–100 % of its wait, so a poll that ends at the
// due time may end a little before it), and a poll waits no longer than until the next is due. Heartbeats keep their
// interval — each is a write, and writes share one database writer — at the price of a shorter poll where the
// interval is not a whole number of waits (at the defaults, 50 s and 60 s: two polls a minute rather than 1.2–1.3).
export const HEARTBEAT_EARLY = 0.1;
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

/** The wait of the next long-poll: the API's, cut short so that it ends when the next heartbeat is due (at least 1 s). */
export const pollWaitS = (apiWaitS: number, heartbeatDueInMs: number) =>
  Math.max(1, Math.min(apiWaitS, Math.ceil(heartbeatDueInMs / 1000)));

/** Runs the agent until `signal` aborts. */
export async function runLoop(d: LoopDeps, signal: AbortSignal): Promise<void> {
  const backoff = d.backoff ?? RETRY;
  let inv = await d.discover();
  let index = 0;
  const canRun = (s: Parameters<typeof missingDevices>[0]) => missingDevices(s, inv);
  // whether the poll loop waits on a long-poll now
  let polling = false;

  /** What a refused call means for the session: register again, and after 409 state_behind also forget the index. */
  function refused(e: unknown) {
    if (needsRegistration(e)) d.session.invalidate();
    if (e instanceof ApiCallError && e.code === "state_behind") {
      // the control plane's state is older than ours: report the running engines (registering again) and keep them
      // through the adopt grace while it decides which it adopts
      d.supervisor.unclaim();
      d.client.forgetIndex();
      index = 0;
    }
  }

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
      refused(e);
      d.log(`status report failed (kept for the next try): ${oneLine(e)}`);
    }
  }

  async function polls() {
    let failures = 0;
    let first = true;
    const now = d.now ?? Date.now;
    const minInterval = d.minPollIntervalMs ?? MIN_POLL_INTERVAL_MS;
    let lastPoll = -Infinity;
    while (!signal.aborted) {
      try {
        const early = lastPoll + minInterval - now();
        if (early > 0) await sleep(early, signal);
        if (signal.aborted) break;
        lastPoll = now();
        await d.session
          .sync(inv, d.supervisor.current(), d.supervisor.running(), {
            force: first,
            withinMs: d.session.intervals().heartbeatIntervalS * 1000 * HEARTBEAT_EARLY,
          })
          .catch((e: unknown) => {
            // the poll goes on (a refused heartbeat says nothing of the assignments); the session retries it later
            if (!(e instanceof HeartbeatFailed)) throw e;
            d.log(`${oneLine(e)}; polling on, the next try in ${(e.retryInMs / 1000).toFixed(1)} s`);
          });
        first = false;
        const wait = pollWaitS(d.session.intervals().pollWaitS, d.session.heartbeatDueInMs());
        polling = true;
        const a = await d.client.poll(d.nodeId, index, wait, d.session.token()!, signal).finally(() => {
          polling = false;
        });
        if (a.index < index) {
          // its state is older than ours (restored from a backup): as after 409 state_behind, report the running
          // engines and keep them through the adopt grace
          d.log(
            `assignment index went backwards (${index} → ${a.index}); registering again to report the running engines`,
          );
          d.supervisor.unclaim();
          d.session.invalidate();
        }
        const moved = a.index !== index;
        index = a.index;
        d.supervisor.setDesired(a.shards, canRun, a.refused);
        await d.supervisor.tick();
        if (moved)
          d.log(
            `assignments at index ${index}: ${a.shards.length} shard${a.shards.length === 1 ? "" : "s"} (${a.shards.map((s) => s.shardId).join(", ") || "none"})`,
          );
        await flush();
        failures = 0;
      } catch (e) {
        if (signal.aborted) break;
        refused(e);
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
        // a fabric change goes at once; a heartbeat with nothing new is the poll loop's while it polls (its poll ends
        // by then, unless it is later than a poll may take), this timer's while that loop is busy elsewhere (an engine
        // draining, a back-off)
        const late = polling ? (d.session.intervals().pollWaitS + POLL_MARGIN_S) * 1000 : 0;
        await d.session.sync(inv, d.supervisor.current(), d.supervisor.running(), { withinMs: -late });
      } catch (e) {
        refused(e);
        throw e;
      }
    }),
  ]);
  await flush().catch(() => undefined);
}
