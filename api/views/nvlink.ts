// The NVLink view (GET /api/v1/nvlink, the console's /admin/nvlink, the NVLink gauges of /metrics): nvlinkView() is
// pure, built on the fabric rules of shared/fabric.ts; readNvlinkInput() is the one read behind it.
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import {
  domainEligibility,
  domainKey,
  homeDomain,
  isJoined,
  nodeFabric,
  notJoinedReason,
} from "../../shared/fabric.js";
import type { Gpu } from "../../shared/schemas/gpu.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import type { NodeState } from "../../shared/schemas/node.js";
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

/** The parts of a GPU the view reads. */
export type NvlinkCard = Pick<Gpu, "index" | "uuid" | "class" | "fabric" | "platform">;

/** One node as the view needs it: identity and state from its row, GPUs and IMEX from its inventory. */
export type NvlinkNodeInput = {
  id: string;
  hostname: string;
  /** The state every view shows (api/nodes/state.ts `nodeState`): anything but `ready` keeps a tray out. */
  state: NodeState;
  gpus: readonly NvlinkCard[];
  imex: Inventory["imex"];
  /** The domain the node was last seen in (its row's `last_domain`), for when its cards report none now. */
  lastDomain?: string | null;
};

/** Everything nvlinkView() needs: every node, and every placed shard with its deployment and last reported state. */
export type NvlinkInput = { nodes: readonly NvlinkNodeInput[]; shards: readonly NvlinkShard[] };

export type { NvlinkDomain, NvlinkGpu, NvlinkShard, NvlinkStandalone, NvlinkTray, NvlinkView };

const ZERO_CLUSTER = "single-machine NVSwitch (cluster UUID is zero): not a multi-node NVLink domain";
const NO_CLUSTER =
  "no cluster UUID reported (a single machine, or a driver older than 560): not a multi-node NVLink domain";

const nullsLast = (a: number | null, b: number | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a - b);
const natural = (a: string, b: string) => a.localeCompare(b, "en", { numeric: true });

/** Whether one card's fabric makes its tray degraded (the rule of shared/fabric.ts, for a single card). */
function cardDegraded(g: NvlinkCard): boolean {
  const f = nodeFabric([g]);
  return f.degraded.length > 0 || f.health === "Limited Capacity";
}

/** One card as the view shows it: joined or why not, its domain, degraded or not, and the fabric as reported. */
export function nvlinkGpu(g: NvlinkCard): NvlinkGpu {
  return {
    index: g.index,
    uuid: g.uuid,
    class: g.class,
    module: g.platform?.moduleId ?? null,
    joined: isJoined(g.fabric),
    domain: domainKey(g.fabric) ?? null,
    notJoined: notJoinedReason(g.fabric) ?? null,
    degraded: cardDegraded(g),
    fabric: g.fabric ?? null,
  };
}

/** "GPU 2 fabric health Limited Capacity, bandwidth Degraded" for each degraded card. */
function warningsOf(gpus: readonly NvlinkCard[]): string[] {
  return gpus.filter(cardDegraded).map((g) => {
    const parts = [
      ...(g.fabric?.health?.summary === "Limited Capacity" ? ["fabric health Limited Capacity"] : []),
      ...(g.fabric?.health?.bandwidth === "Degraded" ? ["bandwidth Degraded"] : []),
    ];
    return `GPU ${g.index} ${parts.join(", ")}`;
  });
}

/** The first value any card's platformInfo reports for `field`. */
function platform<K extends "trayIndex" | "slotNumber" | "chassisSerial">(gpus: readonly NvlinkCard[], field: K) {
  return gpus.find((g) => g.platform?.[field] !== undefined)?.platform?.[field] ?? null;
}

/** A node of a domain: platform position, eligibility with every reason against it, degradation, IMEX and cards. */
export function nvlinkTray(n: NvlinkNodeInput): NvlinkTray {
  const gpus = [...n.gpus].sort((a, b) => a.index - b.index);
  const fabric = domainEligibility(gpus, n.imex);
  const summed = nodeFabric(gpus);
  // drawn in the domain it was last seen in, its cards naming none now: each card says why it is not joined
  const gone = summed.domains.length ? [] : gpus.map((g) => `GPU ${g.index} ${notJoinedReason(g.fabric)}`);
  const reasons = [...(n.state === "ready" ? [] : [`node ${n.state}`]), ...fabric.reasons, ...gone];
  return {
    node: n.id,
    hostname: n.hostname,
    state: n.state,
    trayIndex: platform(gpus, "trayIndex"),
    slotNumber: platform(gpus, "slotNumber"),
    chassisSerial: platform(gpus, "chassisSerial"),
    eligible: fabric.eligible && reasons.length === 0,
    reasons,
    degraded: fabric.degraded,
    warnings: warningsOf(gpus),
    joined: summed.joined,
    total: summed.total,
    fabricHealth: summed.health ?? null,
    imex: n.imex,
    gpus: gpus.map(nvlinkGpu),
  };
}

/**
 * Every multi-node NVLink domain with its trays (in tray/slot order), each card joined or why not, each tray's
 * eligibility and every reason against it, and the shards placed there; nodes with a single-machine NVSwitch apart;
 * nodes with no fabric at all by id. Pure: the same input gives the same view.
 */
export function nvlinkView(input: NvlinkInput): NvlinkView {
  const members = new Map<string, NvlinkTray[]>();
  const standalone: NvlinkStandalone[] = [];
  const noFabric: string[] = [];
  for (const n of input.nodes) {
    // a tray whose cards no longer name a domain (a fabric manager restart blanks them) stays in its last one, out
    const home = homeDomain(n.gpus) ?? n.lastDomain;
    if (home) members.set(home, [...(members.get(home) ?? []), nvlinkTray(n)]);
    else if (n.gpus.some((g) => g.fabric)) {
      const zero = n.gpus.some((g) => g.fabric?.clusterUuid);
      const gpus = [...n.gpus].sort((a, b) => a.index - b.index).map(nvlinkGpu);
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
        shards: input.shards
          .filter((s) => s.fabric === `nvlink:${key}` || ids.has(s.node))
          .sort((a, b) => natural(a.replicaId, b.replicaId) || a.rank - b.rank || natural(a.shardId, b.shardId)),
      };
    });
  return {
    domains,
    standalone: standalone.sort(byText((t) => t.node)),
    noFabric: noFabric.sort(compareText),
  };
}

/**
 * The NVLink parts of parsed inventories, by node id, stamped with the registration and inventory version they came
 * from.
 */
export type NvlinkCache = Map<string, { stamp: string; gpus: NvlinkCard[]; imex: Inventory["imex"] }>;

const stampOf = (r: { registeredAt: number; version: number }) => `${r.registeredAt}:${r.version}`;

/** Nodes with the NVLink parts of their inventories: only inventories that changed since `cache` saw them are read. */
async function readNodes(q: Q, now: number, lostAfterS: number, cache: NvlinkCache): Promise<NvlinkNodeInput[]> {
  const rows = await q
    .select({
      id: nodes.id,
      hostname: nodes.hostname,
      adminState: nodes.adminState,
      lastSeenAt: nodes.lastSeenAt,
      registeredAt: nodes.registeredAt,
      version: nodes.inventoryVersion,
      lastDomain: nodes.lastDomain,
    })
    .from(nodes)
    .orderBy(asc(nodes.id));
  const stale = rows.filter((r) => cache.get(r.id)?.stamp !== stampOf(r)).map((r) => r.id);
  for (let i = 0; i < stale.length; i += 500) {
    const chunk = await q
      .select({
        id: nodes.id,
        registeredAt: nodes.registeredAt,
        version: nodes.inventoryVersion,
        inventory: nodes.inventory,
      })
      .from(nodes)
      .where(inArray(nodes.id, stale.slice(i, i + 500)));
    for (const r of chunk) {
      const inv = readInventory(r);
      const gpus = inv.gpus.map(({ index, uuid, class: cls, fabric, platform }) => ({
        index,
        uuid,
        class: cls,
        ...(fabric ? { fabric } : {}),
        ...(platform ? { platform } : {}),
      }));
      cache.set(r.id, { stamp: stampOf(r), gpus, imex: inv.imex });
    }
  }
  const ids = new Set(rows.map((r) => r.id));
  for (const id of cache.keys()) if (!ids.has(id)) cache.delete(id);
  return rows.flatMap((r) => {
    const c = cache.get(r.id);
    return c
      ? [
          {
            id: r.id,
            hostname: r.hostname,
            state: nodeState(r, now, lostAfterS),
            gpus: c.gpus,
            imex: c.imex,
            lastDomain: r.lastDomain,
          },
        ]
      : [];
  });
}

/** Every placed shard with its deployment, fabric and last reported state. */
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
    })
    .from(shards)
    .innerJoin(replicas, eq(replicas.id, shards.replicaId))
    .leftJoin(shardStatus, and(eq(shardStatus.nodeId, shards.nodeId), eq(shardStatus.shardId, shards.id)));
  return rows.map((r) => ({ ...r, fabric: r.fabric ?? "single", state: r.state ?? "unknown" }));
}

/**
 * What nvlinkView() needs, from the database; `cache` spares re-parsing unchanged inventories (a fresh one reads all).
 */
export async function readNvlinkInput(
  q: Q,
  now: number,
  lostAfterS: number,
  cache: NvlinkCache = new Map(),
): Promise<NvlinkInput> {
  const [nodeInputs, shardInputs] = await Promise.all([readNodes(q, now, lostAfterS, cache), readShards(q)]);
  return { nodes: nodeInputs, shards: shardInputs };
}

/** The NVLink view of the cluster now. */
export async function readNvlinkView(q: Q, now: number, lostAfterS: number): Promise<NvlinkView> {
  return nvlinkView(await readNvlinkInput(q, now, lostAfterS));
}
