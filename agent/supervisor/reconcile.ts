// The engine supervisor: holds the node's desired shard set, starts what is missing, stops what is not wanted,
// replaces changed specs, watches every engine by pid and readiness probe, restarts crashed ones with backoff up to
// a limit, and collects each state transition for the agent to report. Long-lived state lives in this closure.

import type { ShardReport } from "../../shared/schemas/agent.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { ShardState } from "../../shared/schemas/common.js";
import { failureText, LOG_TAIL_LINES, type ShardFailure } from "../../shared/schemas/failure.js";
import type { RunningShard } from "../../shared/schemas/inventory.js";
import { backoffMs } from "./backoff.js";
import { diffShards } from "./diff.js";
import { exitCause, type FailureCause, shardFailure } from "./failure.js";
import { judgeProbe } from "./health.js";
import { capShardLog, logPath, readTail } from "./log-file.js";
import { createRefusals, errorText, type Refused } from "./refusals.js";
import { admit } from "./run-policy.js";
import { portWait, redactArgv, reportOf, runningOf } from "./slot-views.js";
import { persistSlot, type ShardRecord, slotOf } from "./state-files.js";
import { cursorAtEnd, observeTransport } from "./transport.js";
import type { Slot, SupervisorOptions } from "./types.js";

export type Supervisor = ReturnType<typeof createSupervisor>;
export type { Refused } from "./refusals.js";

/** A supervisor over `records` (engines adopted from the state dir, already known to be alive). */
export function createSupervisor(o: SupervisorOptions, records: ShardRecord[] = []) {
  const slots = new Map<string, Slot>();
  let desired: StartShard[] | undefined;
  let check: (s: StartShard) => string | undefined = () => undefined;
  let outbox = new Map<string, ShardReport>();
  let ticking: Promise<void> = Promise.resolve();
  const refusals = createRefusals(o);

  for (const r of records) slots.set(r.shard.shardId, slotOf(r));

  const report = (s: Slot) => outbox.set(s.shard.shardId, reportOf(s, o.now(), true));

  const move = (s: Slot, state: ShardState, message?: string, failure?: ShardFailure) => {
    if (s.state === state && s.message === message) return;
    s.state = state;
    s.message = message;
    s.exitCode = failure?.exitCode;
    s.failure = failure;
    o.log(`shard ${s.shard.shardId}: ${state}${message ? ` (${message})` : ""}`);
    report(s);
  };

  const persist = (s: Slot) => persistSlot(o.stateDir, s, o.now());

  /** Starts a slot's engine; a shard that cannot run here is failed at once with the reason (no restarts). */
  async function start(s: Slot) {
    s.exited = undefined;
    // the engine it replaces on this node (a replica re-placed here) still holds the port: start after it stopped
    const wait = portWait(slots.values(), s);
    s.retryAt = wait ? o.now() + 1000 : undefined;
    if (wait) return move(s, "pending", wait);
    let cannot: string | undefined;
    try {
      cannot =
        check(s.shard) ??
        ((await o.ops.portFree(s.shard.httpPort))
          ? undefined
          : `port ${s.shard.httpPort} is in use by another process`);
    } catch (e) {
      cannot = errorText(e);
    }
    if (cannot) return giveUp(s, cannot);
    let cmd;
    try {
      cmd = admit(s.shard, o.ops.launch, o.policy);
    } catch (e) {
      return giveUp(s, e instanceof Error ? e.message : String(e));
    }
    try {
      const log = logPath(o.stateDir, s.shard.shardId);
      Object.assign(s, { transport: undefined, cursor: await cursorAtEnd(log) });
      const p = await o.ops.spawn(cmd.argv, cmd.env, log);
      Object.assign(s, { pid: p.pid, startTime: p.startTime, startedAt: o.now(), served: false });
      s.unhealthySince = undefined;
      void p.exited.then((e) => {
        if (s.pid === p.pid) s.exited = e;
      });
      move(s, "starting", `pid ${p.pid}: ${redactArgv(cmd.argv).join(" ")}`.slice(0, 512));
      await persist(s);
    } catch (e) {
      return giveUp(s, e instanceof Error ? e.message : String(e));
    }
  }

  /** A shard that cannot be started here at all: failed at once, not retried. */
  async function giveUp(s: Slot, why: string) {
    s.failures = o.restartLimit + 1;
    s.pid = s.startTime = undefined;
    move(s, "failed", why, shardFailure({ reason: why }, { now: o.now(), restart: 0, limit: o.restartLimit }));
    // the failure is reported either way; a state file that cannot be written must not stop the pass
    await persist(s).catch((e) => o.log(`shard ${s.shard.shardId}: state file: ${errorText(e)}`));
  }

  /** A crash, timeout or dead probe: restart after a backoff, or failed past the limit; reported with its log's end. */
  async function crashed(s: Slot, cause: FailureCause) {
    s.failures++;
    const logTail = await readTail(logPath(o.stateDir, s.shard.shardId), LOG_TAIL_LINES);
    const f = shardFailure(cause, {
      startedAt: s.startedAt,
      now: o.now(),
      restart: s.failures,
      limit: o.restartLimit,
      logTail,
    });
    s.pid = s.startTime = undefined;
    if (f.gaveUp) move(s, "failed", failureText(f), f);
    else {
      const wait = backoffMs(s.failures, o.restartBackoff);
      s.retryAt = o.now() + wait;
      move(s, "pending", `${failureText(f)}; next start in ${Math.ceil(wait / 1000)} s`, f);
    }
    await persist(s);
  }

  /** Drains (a ready engine with in-flight requests gets up to the drain limit), then stops; the slot is removed. */
  async function retire(s: Slot, why: string) {
    if (s.pid !== undefined && s.startTime !== undefined) {
      if (s.state === "ready") {
        move(s, "draining", why);
        const end = o.now() + o.drainTimeoutMs;
        while (o.now() < end && ((await o.ops.inflight(s.shard)) ?? 0) > 0)
          await new Promise((r) => setTimeout(r, 250));
      }
      await o.ops.stop(s.pid, s.startTime, o.stopGraceMs);
    }
    s.pid = s.startTime = undefined;
    move(s, "stopped", why);
    await persist(s);
    slots.delete(s.shard.shardId);
  }

  /** Watches one live engine: exit, readiness, startup timeout. */
  async function watch(s: Slot) {
    if (s.pid === undefined || s.startTime === undefined) {
      if (s.state === "pending" && s.retryAt !== undefined && o.now() >= s.retryAt) await start(s);
      return;
    }
    if (s.exited || !o.ops.alive(s.pid, s.startTime)) return crashed(s, exitCause(s.exited, s.pid));
    const adapter = o.ops.adapter(s.shard);
    const path = adapter.healthPath(s.shard);
    if (path === null) {
      if (s.state !== "ready") move(s, "ready");
      return transportStep(s, true);
    }
    const r = await o.ops.probe(s.shard.httpPort, path);
    const v = judgeProbe(s, adapter.readiness(r), r, path, o.now());
    if (v.kind === "ready") {
      s.served = true;
      s.unhealthySince = undefined;
      if (s.state !== "ready") {
        move(s, "ready");
        await persist(s);
      }
    } else if (v.kind === "restart") {
      await o.ops.stop(s.pid, s.startTime, o.stopGraceMs);
      return crashed(s, { reason: v.why });
    } else if (v.kind === "not-ready") {
      if (s.served) s.unhealthySince ??= o.now();
      move(s, "loading", v.message);
    }
    await transportStep(s, false);
  }

  /** Reads on in a live engine's log for what NCCL chose; a changed verdict is logged, reported and kept. */
  async function transportStep(s: Slot, headless: boolean) {
    const said = await observeTransport(s, logPath(o.stateDir, s.shard.shardId), o.now(), headless);
    if (!said) return;
    o.log(said);
    report(s);
    await persist(s);
  }

  /** A new slot for `shard`, reported pending when `announce`. */
  function fresh(shard: StartShard, announce: boolean): Slot {
    const s: Slot = { shard, state: "pending", failures: 0, claimed: true };
    slots.set(shard.shardId, s);
    if (announce) report(s);
    return s;
  }

  /** Applies the desired set (diff), then watches every engine once. */
  async function reconcile() {
    if (desired) {
      const live = [...slots.values()].filter((s) => !s.stopping);
      const d = diffShards(
        desired,
        live.map((s) => ({ shardId: s.shard.shardId, fingerprint: s.shard.fingerprint })),
      );
      for (const shard of d.start) {
        // its old engine is still draining or stopping: start the shard once that one is gone (the retire removes it)
        if (slots.get(shard.shardId)?.stopping) continue;
        await start(fresh(shard, true));
      }
      for (const shard of d.replace) {
        const old = slots.get(shard.shardId)!;
        const stopped = await retire(old, "replaced: the profile changed").then(
          () => true,
          (e) => o.log(`shard ${shard.shardId}: stop failed: ${errorText(e)}`),
        );
        if (!stopped) continue; // the next pass tries again
        await start(fresh(shard, false));
      }
      for (const id of d.keep) {
        const s = slots.get(id)!;
        s.claimed = true;
        if (s.unwantedSince !== undefined) {
          s.unwantedSince = undefined;
          await persist(s);
        }
      }
      for (const id of d.stop) {
        const s = slots.get(id)!;
        if (!s.claimed && s.state !== "failed") {
          s.unwantedSince ??= o.now();
          const left = s.unwantedSince + o.adoptGraceMs - o.now();
          if (left > 0) {
            await persist(s);
            continue;
          }
        }
        s.stopping = retire(s, "no longer assigned to this node").catch((e) => {
          s.stopping = undefined; // the next pass tries again (or keeps it, when it is wanted again)
          o.log(`shard ${id}: stop failed: ${String(e)}`);
        });
      }
    }
    for (const s of [...slots.values()]) {
      // what one shard's check throws is that shard's problem: the others are still watched
      if (!s.stopping) await watch(s).catch((e) => o.log(`shard ${s.shard.shardId}: watch failed: ${errorText(e)}`));
    }
    for (const s of slots.values()) await capShardLog(o.stateDir, s.shard.shardId, o.logMaxBytes);
  }

  return {
    /**
     * Sets the control plane's desired set for this node (and a check of what this node can run now). Shards refused
     * already (`refused`, from reading the answer) or here (an id that cannot name a file) are left out of it and
     * reported failed with why, once; the rest go on.
     */
    setDesired(shards: StartShard[], canRun?: (s: StartShard) => string | undefined, refused: readonly Refused[] = []) {
      const { usable, reports } = refusals.take(shards, refused);
      desired = usable;
      for (const r of reports) outbox.set(r.shardId, r);
      if (canRun) check = canRun;
    },
    /**
     * Forgets that the control plane asked for the running engines (it lost its state): nothing starts or stops until
     * it sends a new desired set, and an engine left out of that is stopped after the adopt grace, as at agent start.
     */
    unclaim() {
      for (const s of slots.values()) s.claimed = false;
      desired = undefined; // the set it sent before is as old as its state: wait for a new one
    },
    /** One reconcile pass; passes never overlap. */
    tick(): Promise<void> {
      ticking = ticking.then(reconcile, reconcile);
      return ticking;
    },
    /** Waits for every stop in progress. */
    async settled(): Promise<void> {
      await ticking;
      await Promise.all([...slots.values()].map((s) => s.stopping));
    },
    /** The state transitions since the last call, one (the latest) per shard. */
    takeReports(): ShardReport[] {
      const out = [...outbox.values()];
      outbox = new Map();
      return out;
    },
    /** Puts reports that could not be sent back, unless a newer one for the shard is waiting. */
    requeue(reports: ShardReport[]) {
      for (const r of reports) if (!outbox.has(r.shardId)) outbox.set(r.shardId, r);
    },
    /** Every shard's current state (for heartbeats and the final report of `--once`). */
    current(): ShardReport[] {
      const refused = refusals.current((id) => slots.has(id));
      return [...[...slots.values()].map((s) => reportOf(s, o.now())), ...refused];
    },
    /** Engines running now, as reported at registration. */
    running(): RunningShard[] {
      return [...slots.values()].flatMap(runningOf);
    },
  };
}
