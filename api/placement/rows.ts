// What placement reads from the database: nodes with the facts of their inventories, models, deployments, placed
// replicas with their shards, the shards' last reported states and the engines no row names. A PlacementCache keeps
// what an earlier read found, so that a read at fleet size fetches only what changed since: node and shard-state rows
// by their change index (`rev`, stamped with the generation + 1 by every write placement cares about), replicas and
// shards by the cluster's assignment sequence (only placement writes them, and it moves the sequence when it does).
// Both only grow, so a read that finds either below what the cache saw (the database restored from an older backup)
// reads everything again.
import { and, asc, count, eq, getTableColumns, gt, inArray, isNotNull, lt, notExists, sql } from "drizzle-orm";
import { nextTurn } from "../../shared/next-turn.js";
import { StartShard } from "../../shared/schemas/assignment.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";
import type { Q } from "../db/client.js";
import { readInParts } from "../db/read-parts.js";
import { cluster, deployments, models, nodes, replicas, shardStatus, shards } from "../db/schema.js";
import type { Orphan } from "./adopt.js";
import type { FitCache } from "./fit.js";
import { type NodeFacts, nodeFacts, placedReplicas, type StatesByShard, shardKey } from "./input.js";
import type { Replica } from "./types.js";

const {
  inventory: _inventory,
  readings: _r,
  heartbeatDigest: _d,
  hostname: _h,
  tokenHash: _t,
  agentVersion: _a,
  ...nodeColumns
} = getTableColumns(nodes);
type NodeRow = { [K in keyof typeof nodeColumns]: (typeof nodes.$inferSelect)[K] };
type StateRow = {
  nodeId: string;
  shardId: string;
  state: string;
  message: string | null;
  transport: ShardTransport | null;
};
const stateColumns = {
  nodeId: shardStatus.nodeId,
  shardId: shardStatus.shardId,
  state: shardStatus.state,
  message: shardStatus.message,
  transport: shardStatus.transport,
};

/**
 * What earlier reads found, reused while unchanged. One cache serves one reader at a time (reads take turns on it);
 * `generation` is the cluster generation the rows were read at.
 */
export type PlacementCache = {
  generation?: number;
  nodes: Map<string, NodeRow & { facts: NodeFacts }>;
  states: Map<string, StateRow>;
  placed?: { assignSeq: number; replicas: Replica[] };
  /** Node fits plan() worked out, for the next plan over the same node objects. */
  fits: FitCache;
  turn: Promise<unknown>;
};

export const newPlacementCache = (): PlacementCache => ({
  nodes: new Map(),
  states: new Map(),
  fits: new Map(),
  turn: Promise.resolve(),
});

const versionOf = (n: { registeredAt: number; inventoryVersion: number }) => `${n.registeredAt}:${n.inventoryVersion}`;

/** Rows per statement when placement reads a fleet in parts. */
const CHUNK = 200;

/** Every node row, in parts of CHUNK by id, with a turn of the event loop between them. */
function allNodeRows(q: Q): Promise<NodeRow[]> {
  return readInParts(
    CHUNK,
    (n) => n.id,
    (after) =>
      q
        .select(nodeColumns)
        .from(nodes)
        .where(after === undefined ? undefined : gt(nodes.id, after))
        .orderBy(asc(nodes.id))
        .limit(CHUNK),
  );
}

/** Node rows changed since the cache's generation (all of them on the first read), with their inventories' facts. */
async function refreshNodes(q: Q, cache: PlacementCache, full: boolean) {
  const rows = full
    ? await allNodeRows(q)
    : await q.select(nodeColumns).from(nodes).where(gt(nodes.rev, cache.generation!));
  const stale = rows.filter((n) => {
    const had = cache.nodes.get(n.id);
    return !had || versionOf(had) !== versionOf(n);
  });
  const facts = new Map<string, NodeFacts>();
  for (let i = 0; i < stale.length; i += CHUNK) {
    if (i) await nextTurn();
    const chunk = await q
      .select({ id: nodes.id, inventory: nodes.inventory })
      .from(nodes)
      .where(
        inArray(
          nodes.id,
          stale.slice(i, i + CHUNK).map((n) => n.id),
        ),
      );
    for (const r of chunk) facts.set(r.id, nodeFacts(r.inventory));
  }
  const had = cache.nodes;
  if (full) cache.nodes = new Map();
  for (const r of rows) {
    const f = facts.get(r.id) ?? had.get(r.id)?.facts;
    if (f) cache.nodes.set(r.id, { ...r, facts: f });
  }
  return rows.map((r) => r.id);
}

/** Shard states reported since the cache's generation, and every state of the nodes in `nodeIds`. */
async function refreshStates(q: Q, cache: PlacementCache, full: boolean, nodeIds: string[]) {
  if (full) cache.states.clear();
  const set = (rows: StateRow[]) => {
    for (const s of rows) cache.states.set(shardKey(s), s);
  };
  set(
    await q
      .select(stateColumns)
      .from(shardStatus)
      .where(full ? undefined : gt(shardStatus.rev, cache.generation!)),
  );
  if (full || !nodeIds.length) return;
  // a node registered again after being deleted starts with no states: drop what was kept of it
  const again = new Set(nodeIds);
  for (const [k, s] of cache.states) if (again.has(s.nodeId)) cache.states.delete(k);
  for (let i = 0; i < nodeIds.length; i += CHUNK)
    set(
      await q
        .select(stateColumns)
        .from(shardStatus)
        .where(inArray(shardStatus.nodeId, nodeIds.slice(i, i + CHUNK))),
    );
}

/** The placed replicas at `assignSeq`: the cached ones when placement has not changed them since. */
async function refreshPlaced(q: Q, cache: PlacementCache, assignSeq: number) {
  if (cache.placed?.assignSeq === assignSeq) return;
  const [replicaRows, shardRows] = [await q.select().from(replicas), await q.select().from(shards)];
  cache.placed = { assignSeq, replicas: placedReplicas(replicaRows, shardRows) };
}

/** Brings the cache up to date with what `q` sees (generation read first: a write after it is found next time). */
async function refresh(q: Q, cache: PlacementCache) {
  const [c] = await q
    .select({ generation: cluster.generation, assignSeq: cluster.assignSeq })
    .from(cluster)
    .where(eq(cluster.id, 1));
  const generation = c?.generation ?? 0;
  // lower than the cache read them: an older copy of the database, whose rows are stamped below what the cache saw
  if (
    (cache.generation !== undefined && generation < cache.generation) ||
    (cache.placed && (c?.assignSeq ?? 0) < cache.placed.assignSeq)
  ) {
    cache.generation = undefined;
    cache.placed = undefined;
  }
  const full = cache.generation === undefined;
  const changed = await refreshNodes(q, cache, full);
  const [n] = await q.select({ n: count() }).from(nodes);
  // a node deleted since (with its states): read everything again
  if (!full && (n?.n ?? 0) !== cache.nodes.size) {
    cache.generation = undefined;
    return refresh(q, cache);
  }
  await refreshStates(q, cache, full, changed);
  await refreshPlaced(q, cache, c?.assignSeq ?? 0);
  cache.generation = generation;
}

/**
 * Whether a kept cache has fallen behind the cluster (`generation`, `assignSeq`): its next read fetches what changed
 * since — after a restart's reconnecting fleet, every node's facts; after another instance's placement, every placed
 * replica. A cache never read is not behind: an instance reads the fleet at start-up, and where nothing is kept between
 * requests (a Worker) a read before the transaction would only read twice.
 */
export const behind = (cache: PlacementCache, generation: number, assignSeq: number) =>
  cache.generation !== undefined && (cache.generation !== generation || cache.placed?.assignSeq !== assignSeq);

/**
 * Brings `cache` up to date with what `q` sees, in its turn with the other reads of it. Placement calls it before its
 * transaction when the cache is `behind`: the transaction's own read then fetches only what changed in between, under
 * the write lock, rather than every node or replica.
 */
export function warmPlacementCache(q: Q, cache: PlacementCache): Promise<void> {
  const mine = cache.turn.then(() => refresh(q, cache));
  cache.turn = mine.catch(() => {
    cache.generation = undefined;
  });
  return mine;
}

export type PlacementRows = Awaited<ReturnType<typeof readPlacementRows>>;

/**
 * The nodes last heard from before `before`, with when, as one row of JSON: while a fleet comes back after an outage
 * thousands are silent, and a row each through the driver (on a libSQL server, in the write transaction) was about
 * half of a run that had nothing to place.
 */
async function silentSince(q: Q, before: number): Promise<Map<string, number>> {
  const [r] = await silentQuery(q, before);
  return new Map(JSON.parse(r?.list ?? "[]") as [string, number][]);
}

/** silentSince()'s statement (the index on the last-seen time and the id, `nodes_last_seen_id`, answers it alone). */
export const silentQuery = (q: Q, before: number) =>
  q
    .select({ list: sql<string | null>`json_group_array(json_array(${nodes.id}, ${nodes.lastSeenAt}))` })
    .from(nodes)
    .where(lt(nodes.lastSeenAt, before));

/**
 * Every row placement reads, as of now. Nodes silent since before `silentBefore` carry their real `lastSeenAt`; the
 * others, heard from since, carry at least `silentBefore` (their liveness is all placement reads of it).
 */
export async function readPlacementRows(q: Q, cache: PlacementCache, silentBefore: number) {
  await warmPlacementCache(q, cache);
  const silent = await silentSince(q, silentBefore);
  const [modelRows, deploymentRows, orphans] = [
    await q.select({ name: models.name, spec: models.spec }).from(models),
    await q
      .select({
        name: deployments.name,
        spec: deployments.spec,
        pending: deployments.pending,
        failing: deployments.failing,
        awaitsReady: deployments.awaitsReady,
      })
      .from(deployments),
    await readOrphans(q),
  ];
  return {
    // the cached rows themselves (placement keeps what it derives from a row while the row object is the same)
    nodes: [...cache.nodes.values()].map((n) => {
      // written only when it moves (rarely: most nodes were heard from since): a write to each of thousands of rows
      // costs more than the read
      const lastSeenAt = silent.get(n.id) ?? Math.max(n.lastSeenAt, silentBefore);
      if (lastSeenAt !== n.lastSeenAt) n.lastSeenAt = lastSeenAt;
      return n;
    }),
    /** The nodes silent since before `silentBefore`, with when they were last heard from. */
    silent: silent as ReadonlyMap<string, number>,
    models: modelRows,
    deployments: deploymentRows,
    placed: cache.placed!.replicas,
    // by shardKey(), as the cache keeps them (a copy: the next read changes the cache's)
    stateOf: new Map(cache.states) as StatesByShard<StateRow>,
    orphans,
  };
}

/** After placement committed its change at `assignSeq`: the replicas it left, so the next read need not fetch them. */
export function keepPlaced(cache: PlacementCache, readAt: number, assignSeq: number, placed: Replica[]): void {
  if (cache.placed?.assignSeq === readAt) cache.placed = { assignSeq, replicas: placed };
}

/**
 * Engines nodes reported running (with their spec) that no shard row names: the candidates for adoption. A spec that
 * does not parse is reported with `spec: undefined`, to be cleared.
 */
async function readOrphans(q: Q): Promise<(Omit<Orphan, "spec"> & { shardId: string; spec?: Orphan["spec"] })[]> {
  const rows = await q
    .select({
      nodeId: shardStatus.nodeId,
      shardId: shardStatus.shardId,
      state: shardStatus.state,
      spec: shardStatus.spec,
    })
    .from(shardStatus)
    .where(
      and(
        isNotNull(shardStatus.spec),
        notExists(q.select({ id: shards.id }).from(shards).where(eq(shards.id, shardStatus.shardId))),
      ),
    );
  return rows.map((r) => {
    let spec: Orphan["spec"] | undefined;
    try {
      const parsed = StartShard.safeParse(JSON.parse(r.spec!));
      spec = parsed.success && parsed.data.shardId === r.shardId ? parsed.data : undefined;
    } catch {
      spec = undefined;
    }
    return { nodeId: r.nodeId, shardId: r.shardId, state: r.state, ...(spec ? { spec } : {}) };
  });
}
