// The agent's standing with the control plane: its token, registration and heartbeats. Registers when it has no
// node token, when the inventory changed in a way a heartbeat cannot carry, or when the control plane no longer
// knows it (401/404/409); otherwise sends heartbeats. Shared by the long-running loop and `--once`.
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { heartbeatOf } from "../shared/heartbeat-of.js";
import type { ShardReport } from "../shared/schemas/agent.js";
import type { Inventory, RunningShard } from "../shared/schemas/inventory.js";
import { VERSION } from "../shared/version.js";
import { ApiCallError, type Client } from "./client.js";
import type { AgentConfig } from "./config.js";
import { cachedImexConfig } from "./discovery/imex-config.js";
import { fabricKey, registrationKey } from "./heartbeat.js";
import { type Identity, readJoinToken, readNodeToken, saveNodeToken } from "./identity.js";
import { backoffMs } from "./supervisor/backoff.js";

export type SessionDeps = {
  cfg: AgentConfig;
  id: Identity;
  client: Client;
  log: (line: string) => void;
  now: () => number;
};
export type Session = Awaited<ReturnType<typeof openSession>>;

const keyPath = (stateDir: string) => join(stateDir, "registered.key");
const digest = (s: string) => createHash("sha256").update(s).digest("hex");

/**
 * When a sync registers or sends a heartbeat. It registers when the node token is missing or refused, or the inventory
 * changed in a way a heartbeat cannot carry; it sends a heartbeat when the fabric changed, or else when one is due
 * within `withinMs` (default 0: when due; negative: only once overdue by that much). `force` registers even when
 * nothing changed (at agent start, to report running shards); `due` sends a heartbeat even when none is due.
 */
export type SyncOptions = { force?: boolean; due?: boolean; withinMs?: number };

/**
 * A heartbeat the control plane refused or did not answer, for a reason registering again would not mend (a 5xx, an
 * unreachable server, a refused body). The session tries the next one after a back-off, so the poll loop can go on
 * polling meanwhile rather than back off with it.
 */
export class HeartbeatFailed extends Error {
  constructor(
    cause: unknown,
    readonly retryInMs: number,
  ) {
    super(`heartbeat failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The back-off after `n` heartbeats failed in a row: from 1 s, doubling, to at most the heartbeat interval. */
export const heartbeatRetryMs = (n: number, intervalS: number) =>
  backoffMs(n, { baseMs: 1000, maxMs: intervalS * 1000 });

/** True for answers that mean "register again": unknown token or node, or GPUs the registration does not have. */
export const needsRegistration = (e: unknown) =>
  e instanceof ApiCallError && [401, 404, 409].includes(e.status) && e.code !== "node_exists";

/** Opens the session from the state dir (node token, last registration) and agent.yaml (join token). */
export async function openSession(d: SessionDeps) {
  let token = await readNodeToken(d.cfg.stateDir);
  const join = await readJoinToken(d.cfg);
  let registeredKey = await readFile(keyPath(d.cfg.stateDir), "utf8").then(
    (s) => s.trim(),
    () => undefined,
  );
  let mustRegister = false;
  let lastFabric: string | undefined;
  let lastHeartbeatAt = 0;
  let intervals = { heartbeatIntervalS: 60, pollWaitS: 30 };
  let syncing: Promise<unknown> = Promise.resolve();
  const imexConfig = cachedImexConfig(d.cfg.imexNodesConfig, d.now);

  async function register(inv: Inventory, running: RunningShard[]) {
    const req = {
      nodeId: d.id.nodeId,
      hostname: d.id.hostname,
      mgmtAddr: d.id.mgmtAddr,
      agentVersion: VERSION,
      labels: d.cfg.labels,
      portRange: d.cfg.portRange,
      inventory: inv,
      runningShards: running.slice(0, 256),
      ...(d.id.mgmtInterface ? { mgmtInterface: d.id.mgmtInterface } : {}),
    };
    const first = token ?? join;
    if (!first)
      throw new Error(
        "no node token in the state dir and no join token configured (join_token or join_token_file in agent.yaml)",
      );
    let res;
    try {
      res = await d.client.register(req, first);
    } catch (e) {
      // the node was deleted (its token is gone): join again when a join token is configured
      if (!(e instanceof ApiCallError && e.status === 401 && token && join)) throw explain(e);
      d.log(`the node token was refused; registering again with the join token`);
      res = await d.client.register(req, join).catch((e2) => Promise.reject(explain(e2)));
    }
    if (res.nodeToken !== token) {
      await saveNodeToken(d.cfg.stateDir, res.nodeToken);
      token = res.nodeToken;
    }
    intervals = { heartbeatIntervalS: res.heartbeatIntervalS, pollWaitS: res.pollWaitS };
    registeredKey = digest(registrationKey(inv));
    await writeFile(keyPath(d.cfg.stateDir), `${registeredKey}\n`, { mode: 0o600 });
    mustRegister = false;
    lastFabric = fabricKey(inv);
    lastHeartbeatAt = d.now();
    d.log(
      `registered as ${d.id.nodeId} with ${d.id.server} (${inv.gpus.length} GPUs, ${running.length} running shard${running.length === 1 ? "" : "s"})`,
    );
  }

  const explain = (e: unknown) =>
    e instanceof ApiCallError && e.code === "node_exists"
      ? new Error(
          `${e.message} — this agent has lost its node token (state dir ${d.cfg.stateDir}); an admin can reset the node by registering it with an admin token, or delete it`,
        )
      : e;

  async function heartbeat(inv: Inventory, shards: ShardReport[]) {
    await d.client.heartbeat(d.id.nodeId, heartbeatOf(inv, shards, await imexConfig()), token!);
    lastFabric = fabricKey(inv);
    lastHeartbeatAt = d.now();
  }

  // heartbeats that failed in a row, and no new try before `retryAt`
  let failures = 0;
  let retryAt = 0;

  /** Milliseconds until the next heartbeat is due (negative: overdue), or until it may be tried again after a failure. */
  const heartbeatDueInMs = () => Math.max(lastHeartbeatAt + intervals.heartbeatIntervalS * 1000, retryAt) - d.now();

  async function syncNow(
    inv: Inventory,
    shards: ShardReport[],
    running: RunningShard[],
    o: SyncOptions,
  ): Promise<"registered" | "heartbeat" | "none"> {
    const key = digest(registrationKey(inv));
    if (o.force || !token || mustRegister || key !== registeredKey) {
      await register(inv, running);
      return "registered";
    }
    // after a failure, nothing before its back-off is over (not even a fabric change, nor early by `withinMs`)
    if (!o.due && d.now() < retryAt) return "none";
    if (!o.due && lastFabric === fabricKey(inv) && heartbeatDueInMs() > (o.withinMs ?? 0)) return "none";
    try {
      await heartbeat(inv, shards);
      failures = 0;
      retryAt = 0;
      return "heartbeat";
    } catch (e) {
      if (!needsRegistration(e)) {
        const wait = heartbeatRetryMs(++failures, intervals.heartbeatIntervalS);
        retryAt = d.now() + wait;
        throw new HeartbeatFailed(e, wait);
      }
      await register(inv, running);
      return "registered";
    }
  }

  return {
    /** The node token (after a registration). */
    token: () => token,
    intervals: () => intervals,
    heartbeatDueInMs,
    /** Forget the registration: the next sync registers. */
    invalidate() {
      mustRegister = true;
    },
    /** Registers or sends a heartbeat as needed (SyncOptions says when). */
    sync(
      inv: Inventory,
      shards: ShardReport[],
      running: RunningShard[],
      o: SyncOptions = {},
    ): Promise<"registered" | "heartbeat" | "none"> {
      // the poll loop and the discovery timer both sync: one at a time, so they never register twice at once
      const run = syncing.then(() => syncNow(inv, shards, running, o));
      syncing = run.catch(() => undefined);
      return run;
    },
  };
}
