// One tray of the NVLink view: a node of a multi-node domain with its platform position, eligibility and every
// reason against it, degraded cards, IMEX and its peer list, the degraded shards on it, and each card joined or why
// not. Pure, built on the fabric rules of shared/fabric.ts.
import { domainEligibility, domainKey, isJoined, nodeFabric, notJoinedReason } from "../../shared/fabric.js";
import { interner } from "../../shared/interner.js";
import type { Gpu } from "../../shared/schemas/gpu.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import type { NodeState } from "../../shared/schemas/node.js";
import type { NvlinkGpu, NvlinkShard, NvlinkTray } from "../../shared/schemas/nvlink.js";
import { degradedShardsOn, type ImexConfigSent, imexConfigOf } from "./nvlink-notes.js";
import type { ImexDomainList } from "./nvlink-peers.js";

/** The parts of a GPU the view reads. */
export type NvlinkCard = Pick<Gpu, "index" | "uuid" | "class" | "fabric" | "platform">;

/** One node as the view needs it: identity and state from its row, GPUs and IMEX from its inventory. */
export type NvlinkNodeInput = {
  id: string;
  hostname: string;
  /** The address peers reach it on: its domain's IMEX peer list should name it. */
  mgmtAddr: string;
  /** The state every view shows (api/nodes/state.ts `nodeState`): anything but `ready` keeps a tray out. */
  state: NodeState;
  gpus: readonly NvlinkCard[];
  imex: Inventory["imex"];
  /** The domain the node was last seen in (its row's `last_domain`), for when its cards report none now. */
  lastDomain?: string | null;
  /** What its last heartbeat said of its IMEX peer list; null or absent when it sent none. */
  imexConfig?: ImexConfigSent | null;
};

/**
 * Whether one card's fabric makes its tray degraded: bandwidth Degraded or health Limited Capacity (the rule of
 * shared/fabric.ts nodeFabric, for a single card, read directly — the view asks it of every card at every scrape).
 */
function cardDegraded(g: NvlinkCard): boolean {
  const h = g.fabric?.health;
  return h?.bandwidth === "Degraded" || h?.summary === "Limited Capacity";
}

/** One card as the view shows it: joined or why not, its domain, degraded or not, and the fabric as reported. */
function nvlinkGpu(g: NvlinkCard): NvlinkGpu {
  return {
    index: g.index,
    uuid: g.uuid,
    class: g.class,
    module: g.platform?.moduleId ?? null,
    joined: isJoined(g.fabric),
    domain: share(domainKey(g.fabric) ?? null),
    notJoined: share(notJoinedReason(g.fabric) ?? null),
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

/**
 * A node of a domain: platform position, eligibility with every reason against it, degradation, IMEX (and its peer
 * list against `imexList`, the domain's), the degraded shards among `shards`, and its cards.
 */
export function nvlinkTray(
  n: NvlinkNodeInput,
  imexList?: ImexDomainList,
  shards: readonly NvlinkShard[] = [],
): NvlinkTray {
  const c = cardsOf(n.gpus, n.imex);
  const reasons = [...(n.state === "ready" ? [] : [`node ${n.state}`]), ...c.reasons];
  return {
    node: n.id,
    hostname: n.hostname,
    state: n.state,
    trayIndex: c.trayIndex,
    slotNumber: c.slotNumber,
    chassisSerial: c.chassisSerial,
    eligible: c.eligible && reasons.length === 0,
    reasons,
    degraded: c.degraded,
    warnings: [...c.warnings],
    joined: c.joined,
    total: c.total,
    fabricHealth: c.fabricHealth,
    imex: n.imex,
    imexConfig: imexConfigOf(n.imexConfig, imexList),
    degradedShards: degradedShardsOn(n.id, shards),
    gpus: [...c.gpus],
  };
}

/** What a tray's cards and IMEX alone decide: everything of nvlinkTray() but the node's state, peers and shards. */
type Cards = Pick<
  NvlinkTray,
  "trayIndex" | "slotNumber" | "chassisSerial" | "degraded" | "warnings" | "joined" | "total" | "fabricHealth" | "gpus"
> & { eligible: boolean; reasons: string[]; imex: Inventory["imex"] };

/**
 * Worked out once per cards list: a scrape draws every tray of the fleet, and the lists (with their IMEX) are the
 * ones the view's cache keeps while the node's inventory has not changed. A list seen with another IMEX is worked out
 * again.
 */
const cardsMemo = new WeakMap<readonly NvlinkCard[], Cards>();
const share = interner();

/** What `cards` (with `imex`) decide of a tray, from the memo while it holds the same list with the same IMEX. */
export function cardsOf(cards: readonly NvlinkCard[], imex: Inventory["imex"]): Cards {
  const known = cardsMemo.get(cards);
  if (known?.imex === imex) return known;
  const gpus = [...cards].sort((a, b) => a.index - b.index);
  const fabric = domainEligibility(gpus, imex);
  const summed = nodeFabric(gpus);
  // drawn in the domain it was last seen in, its cards naming none now: each card says why it is not joined
  const gone = summed.domains.length ? [] : gpus.map((g) => `GPU ${g.index} ${notJoinedReason(g.fabric)}`);
  const out: Cards = {
    imex,
    trayIndex: platform(gpus, "trayIndex"),
    slotNumber: platform(gpus, "slotNumber"),
    chassisSerial: platform(gpus, "chassisSerial"),
    eligible: fabric.eligible,
    // the same reasons and warnings stand for every tray of a kind: kept once
    reasons: share([...fabric.reasons, ...gone]),
    degraded: fabric.degraded,
    warnings: share(warningsOf(gpus)),
    joined: summed.joined,
    total: summed.total,
    fabricHealth: summed.health ?? null,
    gpus: gpus.map(nvlinkGpu),
  };
  cardsMemo.set(cards, out);
  return out;
}
