// The engine supervisor: holds the node's desired shard set, starts what is missing, stops what is not wanted,
// replaces changed specs, watches every engine by pid and readiness probe, restarts crashed ones with backoff up to
// a limit, and collects each state transition for the agent to report. Long-lived state lives in this closure.

import type { ShardReport } from "../../shared/schemas/agent.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { ShardState } from "../../shared/schemas/common.js";
import type { RunningShard } from "../../shared/schemas/inventory.js";
import { runningShard } from "./adopt.js";
import { backoffMs } from "./backoff.js";
import { diffShards } from "./diff.js";
import { judgeProbe } from "./health.js";
import { capLog, logPath } from "./log-file.js";
import { removeRecord, type ShardRecord, writeRecord } from "./state-files.js";
import type { Slot, SupervisorOptions } from "./types.js";

export type Supervisor = ReturnType<typeof createSupervisor>;

/** A supervisor over `records` (engines adopted from the state dir, already known to be alive). */
export function createSupervisor(o: SupervisorOptions, records: ShardRecord[] = []) {
  const slots = new Map<string, Slot>();
  let desired: StartShard[] | undefined;
  let check: (s: StartShard) => string | undefined = () => undefined;
  let outbox = new Map<string, ShardReport>();
  let ticking: Promise<void> = Promise.resolve();

  for (const r of records) {
    slots.set(r.shard.shardId, {
      shard: r.shard,
      state: r.state,
      pid: r.pid,
      startTime: r.startTime,
      startedAt: r.startedAt,
      failures: r.restarts,
      claimed: false,
      unwantedSince: r.unwantedSince,
      served: r.state === "ready",
    });
  }

  const report = (s: Slot) =>
    outbox.set(s.shard.shardId, {
      shardId: s.shard.shardId,
      replicaId: s.shard.replicaId,
      state: s.state,
      at: o.now(),
      ...(s.message ? { message: s.message.slice(0, 2048) } : {}),
      ...(s.exitCode !== undefined ? { exitCode: s.exitCode } : {}),
    });

  const move = (s: Slot, state: ShardState, message?: string, exitCode?: number) => {
    if (s.state === state && s.message === message) return;
    s.state = state;
    s.message = message;
    s.exitCode = exitCode;
    o.log(`shard ${s.shard.shardId}: ${state}${message ? ` (${message})` : ""}`);
    report(s);
  };

  const persist = (s: Slot) =>
    s.pid === undefined || s.startTime === undefined
      ? removeRecord(o.stateDir, s.shard.shardId)
      : writeRecord(o.stateDir, {
          shard: s.shard,
          pid: s.pid,
          startTime: s.startTime,
          startedAt: s.startedAt ?? o.now(),
          restarts: s.failures,
          state: s.state,
          ...(s.unwantedSince !== undefined ? { unwantedSince: s.unwantedSince } : {}),
        });

  /** Starts a slot's engine; a shard that cannot run here is failed at once with the reason (no restarts). */
  async function start(s: Slot) {
    s.retryAt = undefined;
    s.exited = undefined;
    const cannot =
      check(s.shard) ??
      ((await o.ops.portFree(s.shard.httpPort)) ? undefined : `port ${s.shard.httpPort} is in use by another process`);
    if (cannot) return giveUp(s, cannot);
    let cmd;
    try {
      cmd = o.ops.launch(s.shard);
    } catch (e) {
      return giveUp(s, e instanceof Error ? e.message : String(e));
    }
    try {
      const p = await o.ops.spawn(cmd.argv, cmd.env, logPath(o.stateDir, s.shard.shardId));
      Object.assign(s, { pid: p.pid, startTime: p.startTime, startedAt: o.now(), served: false });
      s.unhealthySince = undefined;
      void p.exited.then((e) => {
        if (s.pid === p.pid) s.exited = e;
      });
      move(s, "starting", `pid ${p.pid}: ${cmd.argv.join(" ")}`.slice(0, 512));
      await persist(s);
    } catch (e) {
      return giveUp(s, e instanceof Error ? e.message : String(e));
    }
  }

  async function giveUp(s: Slot, why: string, exitCode?: number) {
    s.failures = o.restartLimit + 1;
    s.pid = s.startTime = undefined;
    move(s, "failed", why, exitCode);
    await persist(s);
  }

  /** A crash, timeout or dead probe: restart after a backoff, or stay failed past the limit. */
  async function crashed(s: Slot, why: string, exitCode?: number) {
    s.failures++;
    s.pid = s.startTime = undefined;
    if (s.failures > o.restartLimit) {
      move(s, "failed", `${why}; gave up after ${o.restartLimit} restart${o.restartLimit === 1 ? "" : "s"}`, exitCode);
    } else {
      const wait = backoffMs(s.failures, o.restartBackoff);
      s.retryAt = o.now() + wait;
      move(s, "pending", `${why}; restart ${s.failures} of ${o.restartLimit} in ${Math.ceil(wait / 1000)} s`, exitCode);
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
    if (s.exited || !o.ops.alive(s.pid, s.startTime)) {
      const e = s.exited;
      return crashed(s, e ? `engine ${e.message}` : `engine process ${s.pid} is gone`, e?.exitCode ?? undefined);
    }
    const adapter = o.ops.adapter(s.shard);
    const path = adapter.healthPath(s.shard);
    if (path === null) {
      if (s.state !== "ready") move(s, "ready");
      return;
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
      return crashed(s, v.why);
    } else if (v.kind === "not-ready") {
      if (s.served) s.unhealthySince ??= o.now();
      move(s, "loading", v.message);
    }
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
        const s: Slot = { shard, state: "pending", failures: 0, claimed: true };
        slots.set(shard.shardId, s);
        report(s);
        await start(s);
      }
      for (const shard of d.replace) {
        await retire(slots.get(shard.shardId)!, "replaced: the profile changed");
        const s: Slot = { shard, state: "pending", failures: 0, claimed: true };
        slots.set(shard.shardId, s);
        await start(s);
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
    for (const s of [...slots.values()]) if (!s.stopping) await watch(s);
    for (const s of slots.values()) {
      try {
        await capLog(logPath(o.stateDir, s.shard.shardId), o.logMaxBytes);
      } catch {
        // a shard id that cannot name a file was failed at its start; its log does not exist
      }
    }
  }

  return {
    /** Sets the control plane's desired set for this node (and a check of what this node can run now). */
    setDesired(shards: StartShard[], canRun?: (s: StartShard) => string | undefined) {
      desired = shards;
      if (canRun) check = canRun;
    },
    /**
     * Forgets that the control plane asked for the running engines (it lost its state): nothing is started or stopped
     * until it sends a new desired set, and each engine left out of it is stopped only after the adopt grace, as at
     * agent start.
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
      return [...slots.values()].map((s) => ({
        shardId: s.shard.shardId,
        replicaId: s.shard.replicaId,
        state: s.state,
        at: o.now(),
        ...(s.message ? { message: s.message.slice(0, 2048) } : {}),
      }));
    },
    /** Engines running now, as reported at registration. */
    running(): RunningShard[] {
      return [...slots.values()]
        .filter((s) => s.pid !== undefined && s.startTime !== undefined)
        .map((s) =>
          runningShard({
            shard: s.shard,
            pid: s.pid!,
            startTime: s.startTime!,
            startedAt: s.startedAt ?? 0,
            restarts: s.failures,
            state: s.state,
          }),
        );
    },
  };
}

/** The probe host for engines bound to `bindHost` (a wildcard bind is probed on loopback). */
export const probeHost = (bindHost: string) => (bindHost === "0.0.0.0" || bindHost === "::" ? "127.0.0.1" : bindHost);
