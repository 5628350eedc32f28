// The router's endpoint table: for each served model name, the rank-0 endpoints of its ready replicas, and why a
// declared model has none. Read from the database, cached briefly per API instance and refreshed in the background;
// when the database cannot be read the last table stays in use (engines keep serving while the database is down).
import { and, eq } from "drizzle-orm";
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { ModelSpec } from "../../shared/schemas/model.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";
import { byText } from "../../shared/sort.js";
import type { Q } from "../db/client.js";
import { deployments, models, shardStatus, shards } from "../db/schema.js";
import type { Log } from "../log.js";
import { failingReason } from "../placement/failing.js";
import { degradedReason, policies, replicaState, serves, type TransportPolicy } from "../placement/serving.js";
import { routingOf } from "./routing.js";
import type { Endpoint, EndpointTable, Routing, TableCache } from "./types.js";

type ShardRow = {
  replicaId: string;
  rank: number;
  spec: string;
  state: string | null;
  transport?: ShardTransport | null;
};

/**
 * Builds the table from shard rows (with their reported state and transport) and the declared models and
 * deployments; a replica whose transport is not the one it was placed for is left out unless its deployment's
 * `policy` prefers serving it. Pure.
 */
export function buildTable(
  rows: ShardRow[],
  declared: { served: string; pending: string | undefined }[],
  readAt: number,
  policy: (deployment: string) => TransportPolicy = () => "require",
): EndpointTable {
  const byReplica = new Map<string, ShardRow[]>();
  for (const r of rows) byReplica.set(r.replicaId, [...(byReplica.get(r.replicaId) ?? []), r]);
  const ready = new Map<string, Endpoint[]>();
  const held = new Map<string, string>();
  for (const [replicaId, mine] of byReplica) {
    const leader = mine.find((s) => s.rank === 0);
    if (!leader) continue;
    const state = replicaState(mine);
    if (state !== "ready" && state !== "degraded") continue;
    const spec = JSON.parse(leader.spec) as StartShard;
    if (!serves(state, policy(spec.deployment))) {
      if (!held.has(spec.model)) held.set(spec.model, `replica ${replicaId} is not served: ${degradedReason(mine)}`);
      continue;
    }
    const host = spec.leaderAddr.includes(":") ? `[${spec.leaderAddr}]` : spec.leaderAddr;
    const e: Endpoint = {
      replicaId,
      deployment: spec.deployment,
      model: spec.model,
      url: `http://${host}:${spec.httpPort}`,
    };
    ready.set(e.model, [...(ready.get(e.model) ?? []), e]);
  }
  for (const list of ready.values()) list.sort(byText((e) => e.replicaId));
  // a model served by several deployments: the first pending reason found says why none is ready
  const why = new Map<string, string>();
  for (const d of declared) if (d.pending && !why.has(d.served)) why.set(d.served, d.pending);
  for (const [model, reason] of held) if (!why.has(model)) why.set(model, reason);
  for (const d of declared) if (!why.has(d.served)) why.set(d.served, "no replica is ready yet");
  for (const model of ready.keys()) if (!why.has(model)) why.set(model, "");
  return { ready, declared: why, readAt };
}

/** Reads the table from the database. */
export async function readTable(q: Q, now: number): Promise<EndpointTable> {
  const rows = await q
    .select({
      replicaId: shards.replicaId,
      rank: shards.rank,
      spec: shards.spec,
      state: shardStatus.state,
      transport: shardStatus.transport,
    })
    .from(shards)
    .leftJoin(shardStatus, and(eq(shardStatus.nodeId, shards.nodeId), eq(shardStatus.shardId, shards.id)));
  const ms = await q.select({ name: models.name, spec: models.spec }).from(models);
  const specs = ms.map((m) => ({ name: m.name, spec: JSON.parse(m.spec) as ModelSpec }));
  const served = new Map(specs.map((m) => [m.name, m.spec.servedName ?? m.name]));
  const ds = await q
    .select({
      name: deployments.name,
      spec: deployments.spec,
      model: deployments.model,
      pending: deployments.pending,
      failing: deployments.failing,
    })
    .from(deployments);
  const policy = policies(ds);
  const declared = ds.map((d) => ({
    served: served.get(d.model) ?? d.model,
    pending: !served.has(d.model)
      ? `model ${d.model} does not exist`
      : // a crash-looping deployment says how its engine fails, which its placed replicas' pending list does not
        (d.failing ? failingReason(d.failing) : undefined) || d.pending?.map((p) => p.reason).join("; ") || undefined,
  }));
  const routing = new Map<string, Routing>();
  for (const m of specs) {
    const name = m.spec.servedName ?? m.name;
    if (!routing.has(name)) routing.set(name, routingOf(m.spec));
  }
  return { ...buildTable(rows, declared, now, (d) => policy.get(d) ?? "require"), routing };
}

/** A table cache that re-reads at most every `ttlMs` and in the background every `refreshMs`. */
export function createTableCache(
  read: () => Promise<EndpointTable>,
  o: { now: () => number; log: Log; ttlMs?: number; refreshMs?: number },
): TableCache {
  const ttl = o.ttlMs ?? 1000;
  let table: EndpointTable | undefined;
  let stale: { since: number; error: string } | null = null;
  let reading: Promise<EndpointTable> | undefined;
  const refresh = () =>
    (reading ??= read()
      .then((t) => {
        if (stale) o.log.info("router: endpoint table readable again", { staleForMs: o.now() - stale.since });
        stale = null;
        table = t;
        return t;
      })
      .catch((e: unknown) => {
        if (!stale) {
          stale = { since: o.now(), error: e instanceof Error ? e.message : String(e) };
          o.log.error("router: cannot read the endpoint table; serving from the last one", { error: stale.error });
        }
        if (table) return table;
        throw e;
      })
      .finally(() => {
        reading = undefined;
      }));
  const timer = setInterval(() => void refresh().catch(() => undefined), o.refreshMs ?? ttl);
  timer.unref();
  return {
    async get() {
      if (table && o.now() - table.readAt < ttl) return table;
      if (table) {
        void refresh().catch(() => undefined);
        return table;
      }
      return refresh();
    },
    staleness: () => stale,
    close: () => clearInterval(timer),
  };
}

/**
 * A table cache for a Worker isolate: the table (plain data) is kept between requests, but each request that finds it
 * older than `ttlMs` reads its own — no timer or shared promise outlives a request there. A failed read serves the last
 * table, as on Node.
 */
export function createIsolateTableCache(
  read: () => Promise<EndpointTable>,
  o: { now: () => number; log: Log; ttlMs?: number },
): TableCache {
  const ttl = o.ttlMs ?? 1000;
  let table: EndpointTable | undefined;
  let stale: { since: number; error: string } | null = null;
  return {
    async get() {
      if (table && o.now() - table.readAt < ttl) return table;
      try {
        table = await read();
        stale = null;
      } catch (e) {
        if (!table) throw e;
        if (!stale)
          o.log.error("router: cannot read the endpoint table; serving from the last one", { error: String(e) });
        stale ??= { since: o.now(), error: e instanceof Error ? e.message : String(e) };
      }
      return table;
    },
    staleness: () => stale,
    close() {},
  };
}
