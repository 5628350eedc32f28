// The NVLink view (GET /api/v1/nvlink, the console's /admin/nvlink, the NVLink gauges of /metrics): nvlinkView() is
// pure, built on the fabric rules of shared/fabric.ts; readNvlinkInput() is the one read behind it.
import { and, asc, eq, gt, inArray, sql } from "drizzle-orm";
import { interner } from "../../shared/interner.js";
import { nextTurn } from "../../shared/next-turn.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import type {
  NvlinkDomain,
  NvlinkGpu,
  NvlinkShard,
  NvlinkStandalone,
  NvlinkTray,
  NvlinkView,
} from "../../shared/schemas/nvlink.js";
import { byText, compareText } from "../../shared/sort.js";
import type { Q } from "../db/client.js";
import { readInventory } from "../db/nodes.js";
import { nodes, replicas, shardStatus, shards } from "../db/schema.js";
import { nodeState } from "../nodes/state.js";
import { type ImexDomainList, imexDomainLists, nodeDomain } from "./nvlink-peers.js";
import { cardsOf, type NvlinkCard, type NvlinkNodeInput, nvlinkTray } from "./nvlink-tray.js";

/**
 * Everything nvlinkView() needs: every node; every placed shard with its deployment, last reported state and
 * transport; and each domain's expected IMEX peer list (imexListsOf() over the same nodes).
 */
export type NvlinkInput = {
  nodes: readonly NvlinkNodeInput[];
  shards: readonly NvlinkShard[];
  imexLists: ReadonlyMap<string, ImexDomainList>;
};

/** When each node was last heard from, and last heartbeated (null before its first): read with the view's nodes. */
export type NodeLiveness = ReadonlyMap<string, { lastSeenAt: number; lastHeartbeatAt: number | null }>;

export type {
  NvlinkCard,
  NvlinkDomain,
  NvlinkGpu,
  NvlinkNodeInput,
  NvlinkShard,
  NvlinkStandalone,
  NvlinkTray,
  NvlinkView,
};

const ZERO_CLUSTER = "single-machine NVSwitch (cluster UUID is zero): not a multi-node NVLink domain";
const NO_CLUSTER =
  "no cluster UUID reported (a single machine, or a driver older than 560): not a multi-node NVLink domain";

const nullsLast = (a: number | null, b: number | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a - b);
const natural = (a: string, b: string) => a.localeCompare(b, "en", { numeric: true });

/**
 * Every multi-node NVLink domain with its trays (in tray/slot order), each card joined or why not, each tray's
 * eligibility and every reason against it, and the shards placed there; nodes with a single-machine NVSwitch apart;
 * nodes with no fabric at all by id. Pure: the same input gives the same view.
 */
export function nvlinkView(input: NvlinkInput): NvlinkView {
  const members = new Map<string, NvlinkTray[]>();
  const shards = [...input.shards].sort(
    (a, b) => natural(a.replicaId, b.replicaId) || a.rank - b.rank || natural(a.shardId, b.shardId),
  );
  // each tray is given the shards on its node only: a fleet of trays each filtering every shard was quadratic
  const onNode = new Map<string, NvlinkShard[]>();
  for (const s of shards) {
    const list = onNode.get(s.node);
    if (list) list.push(s);
    else onNode.set(s.node, [s]);
  }
  const standalone: NvlinkStandalone[] = [];
  const noFabric: string[] = [];
  for (const n of input.nodes) {
    // a tray whose cards no longer name a domain (a fabric manager restart blanks them) stays in its last one, out
    const home = nodeDomain(n.gpus, n.lastDomain);
    if (home) {
      const tray = nvlinkTray(n, input.imexLists.get(home), onNode.get(n.id));
      const trays = members.get(home);
      if (trays) trays.push(tray);
      else members.set(home, [tray]);
    } else if (n.gpus.some((g) => g.fabric)) {
      const zero = n.gpus.some((g) => g.fabric?.clusterUuid);
      const gpus = [...cardsOf(n.gpus, n.imex).gpus];
      standalone.push({
        node: n.id,
        hostname: n.hostname,
        state: n.state,
        reason: zero ? ZERO_CLUSTER : NO_CLUSTER,
        gpus,
      });
    } else noFabric.push(n.id);
  }
  const domains = [...members.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([key, trays]): NvlinkDomain => {
      const dot = key.lastIndexOf(".");
      const ids = new Set(trays.map((t) => t.node));
      return {
        key,
        clusterUuid: key.slice(0, dot),
        cliqueId: key.slice(dot + 1),
        eligibleTrays: trays.filter((t) => t.eligible).length,
        degraded: trays.some((t) => t.degraded),
        trays: trays.sort(
          (a, b) =>
            nullsLast(a.trayIndex, b.trayIndex) || nullsLast(a.slotNumber, b.slotNumber) || compareText(a.node, b.node),
        ),
        shards: shards.filter((s) => s.fabric === `nvlink:${key}` || ids.has(s.node)),
      };
    });
  return {
    domains,
    standalone: standalone.sort(byText((t) => t.node)),
    noFabric: noFabric.sort(compareText),
  };
}

/** What each domain's IMEX peer list should be: every node drawn in it, the digest computed once per domain. */
export function imexListsOf(ns: readonly NvlinkNodeInput[]): Promise<Map<string, ImexDomainList>> {
  return imexDomainLists(ns.map((n) => ({ id: n.id, mgmtAddr: n.mgmtAddr, domain: nodeDomain(n.gpus, n.lastDomain) })));
}

/**
 * The NVLink parts of parsed inventories, by node id, stamped with the registration and the change index (`rev`) of the
 * row they came from: `rev` moves when a card's fabric or health, IMEX or a registration changes, not at a heartbeat
 * that only reports memory in use — so a scrape re-reads the inventories whose NVLink parts can have changed.
 */
export type NvlinkCache = Map<string, { stamp: string; gpus: NvlinkCard[]; imex: Inventory["imex"] }>;

/** The NVLink parts many nodes share, kept once. */
const share = interner();

const stampOf = (r: { registeredAt: number; rev: number }) => `${r.registeredAt}:${r.rev}`;

const rowColumns = {
  id: nodes.id,
  hostname: nodes.hostname,
  adminState: nodes.adminState,
  lastSeenAt: nodes.lastSeenAt,
  lastHeartbeatAt: nodes.lastHeartbeatAt,
  registeredAt: nodes.registeredAt,
  rev: nodes.rev,
  lastDomain: nodes.lastDomain,
  mgmtAddr: nodes.mgmtAddr,
  imexDigest: nodes.imexConfigDigest,
  imexAddresses: nodes.imexConfigAddresses,
};
/** Rows per statement of the read of every node. */
const PART = 1000;

/**
 * Every node's row (without its inventory) by id, in parts with a turn of the event loop between them: at 10,000 nodes
 * the read takes ~0.1 s of the synchronous driver, which other requests need not wait for in one piece.
 */
async function nodeRows(q: Q) {
  const out: Awaited<ReturnType<typeof readPart>> = [];
  function readPart(after: string | undefined) {
    return q
      .select(rowColumns)
      .from(nodes)
      .where(after === undefined ? undefined : gt(nodes.id, after))
      .orderBy(asc(nodes.id))
      .limit(PART);
  }
  for (;;) {
    const part = await readPart(out.at(-1)?.id);
    out.push(...part);
    if (part.length < PART) return out;
    await nextTurn();
  }
}

/** Nodes with the NVLink parts of their inventories: only inventories that changed since `cache` saw them are read. */
async function readNodes(
  q: Q,
  now: number,
  lostAfterS: number,
  cache: NvlinkCache,
): Promise<{ inputs: NvlinkNodeInput[]; liveness: NodeLiveness }> {
  const rows = await nodeRows(q);
  const stale = rows.filter((r) => cache.get(r.id)?.stamp !== stampOf(r)).map((r) => r.id);
  for (let i = 0; i < stale.length; i += 500) {
    const chunk = await q
      .select({
        id: nodes.id,
        registeredAt: nodes.registeredAt,
        rev: nodes.rev,
        inventory: nodes.inventory,
      })
      .from(nodes)
      .where(inArray(nodes.id, stale.slice(i, i + 500)));
    for (const r of chunk) {
      // the view draws no readings (memory in use, utilization): the inventory alone
      const inv = readInventory({ inventory: r.inventory, readings: null });
      // a card's UUID and platform position are its own; its class, fabric (its domain's) and IMEX kept once for all
      const gpus = inv.gpus.map(({ index, uuid, class: cls, fabric, platform }) => ({
        index,
        uuid,
        class: share(cls),
        ...(fabric ? { fabric: share(fabric) } : {}),
        ...(platform ? { platform } : {}),
      }));
      cache.set(r.id, { stamp: stampOf(r), gpus, imex: share(inv.imex) });
    }
  }
  const ids = new Set(rows.map((r) => r.id));
  for (const id of cache.keys()) if (!ids.has(id)) cache.delete(id);
  const liveness = new Map(rows.map((r) => [r.id, { lastSeenAt: r.lastSeenAt, lastHeartbeatAt: r.lastHeartbeatAt }]));
  const inputs = rows.flatMap((r) => {
    const c = cache.get(r.id);
    return c
      ? [
          {
            id: r.id,
            hostname: r.hostname,
            mgmtAddr: r.mgmtAddr,
            state: nodeState(r, now, lostAfterS),
            gpus: c.gpus,
            imex: c.imex,
            lastDomain: r.lastDomain,
            imexConfig:
              r.imexDigest !== null && r.imexAddresses !== null
                ? { digest: r.imexDigest, addresses: r.imexAddresses }
                : null,
          },
        ]
      : [];
  });
  return { inputs, liveness };
}

/** Every placed shard with its deployment, fabric, last reported state and transport. */
async function readShards(q: Q): Promise<NvlinkShard[]> {
  const rows = await q
    .select({
      shardId: shards.id,
      replicaId: shards.replicaId,
      deployment: replicas.deployment,
      node: shards.nodeId,
      rank: shards.rank,
      fabric: sql<string | null>`json_extract(${shards.spec}, '$.fabric')`,
      state: shardStatus.state,
      transport: shardStatus.transport,
    })
    .from(shards)
    .innerJoin(replicas, eq(replicas.id, shards.replicaId))
    .leftJoin(shardStatus, and(eq(shardStatus.nodeId, shards.nodeId), eq(shardStatus.shardId, shards.id)));
  return rows.map((r) => ({
    ...r,
    fabric: r.fabric ?? "single",
    state: r.state ?? "unknown",
    transport: r.transport ?? null,
  }));
}

/**
 * What nvlinkView() needs, from the database, with each node's liveness (the metrics' up and heartbeat-age gauges read
 * it from the same rows); `cache` spares re-parsing unchanged inventories (a fresh one reads all).
 */
export async function readNvlinkInput(
  q: Q,
  now: number,
  lostAfterS: number,
  cache: NvlinkCache = new Map(),
): Promise<NvlinkInput & { liveness: NodeLiveness }> {
  const [{ inputs, liveness }, shardInputs] = await Promise.all([readNodes(q, now, lostAfterS, cache), readShards(q)]);
  return { nodes: inputs, shards: shardInputs, imexLists: await imexListsOf(inputs), liveness };
}

/** The NVLink view of the cluster now. */
export async function readNvlinkView(q: Q, now: number, lostAfterS: number): Promise<NvlinkView> {
  return nvlinkView(await readNvlinkInput(q, now, lostAfterS));
}
