import type { GpuFabric } from "./schemas/gpu.js";
import { compareText } from "./sort.js";

const ZERO_UUID = /^[0-]*$/;

/** A GPU is joined to a multi-node NVLink domain when its fabric finished, succeeded and names a real cluster. */
export function isJoined(f: GpuFabric | undefined): boolean {
  if (!f) return false;
  return f.state === "Completed" && f.status === "Success" && !!f.clusterUuid && !ZERO_UUID.test(f.clusterUuid);
}

/** Domain key `<clusterUuid>.<cliqueId>` of a joined GPU; undefined for a single machine's NVSwitch (zero cluster). */
export function domainKey(f: GpuFabric | undefined): string | undefined {
  if (!f?.clusterUuid || ZERO_UUID.test(f.clusterUuid)) return undefined;
  return `${f.clusterUuid}.${f.cliqueId ?? "0"}`;
}

/** Why a GPU is not joined, in words a person can act on; undefined when it is joined. */
export function notJoinedReason(f: GpuFabric | undefined): string | undefined {
  if (isJoined(f)) return undefined;
  if (!f) return "no NVLink fabric reported";
  if (f.state !== "Completed") return `fabric ${f.state}`;
  if (f.status !== "Success") return `fabric status ${f.status ?? "not reported"}`;
  if (!f.clusterUuid) return "no cluster UUID reported (a single machine, or a driver older than 560)";
  return "not in a multi-node NVLink domain (cluster UUID is zero)";
}

export type NodeFabric = {
  /** The node's domain key when every card reports the same non-zero cluster; undefined otherwise. */
  domain?: string;
  /** Distinct domain keys the cards report (more than one: mixed cluster UUIDs on one node). */
  domains: string[];
  joined: number;
  total: number;
  /** The worst fabric health summary any card reports (`Unhealthy` > `Limited Capacity` > `Healthy`). */
  health?: string;
  /** Cards whose bandwidth is reported `Degraded`. */
  degraded: number[];
};

const HEALTH_RANK = ["Healthy", "Limited Capacity", "Unhealthy"];

/** A node's NVLink fabric summed up from its cards: its domain, how many cards are joined, and its health. */
export function nodeFabric(gpus: readonly { index: number; fabric?: GpuFabric }[]): NodeFabric {
  const keys = gpus.map((g) => domainKey(g.fabric));
  const domains = [...new Set(keys.filter((k): k is string => k !== undefined))].sort();
  const summaries = gpus.map((g) => g.fabric?.health?.summary).filter((s): s is string => !!s);
  const health = summaries.sort((a, b) => HEALTH_RANK.indexOf(b) - HEALTH_RANK.indexOf(a))[0];
  return {
    ...(domains.length === 1 && keys.every((k) => k === domains[0]) ? { domain: domains[0] } : {}),
    domains,
    joined: gpus.filter((g) => isJoined(g.fabric)).length,
    total: gpus.length,
    ...(health ? { health } : {}),
    degraded: gpus.filter((g) => g.fabric?.health?.bandwidth === "Degraded").map((g) => g.index),
  };
}

export type DomainEligibility = {
  /** The node's domain key when every card is joined to one domain. */
  domain?: string;
  /** True when the node can host a shard of a multi-node NVLink replica. */
  eligible: boolean;
  /** Every reason it cannot, naming the GPU or IMEX ("GPU 2 fabric In Progress", "IMEX down"). */
  reasons: string[];
  /**
   * Some card's bandwidth is degraded, its health is Limited Capacity, or its IMEX domain reports DEGRADED (a peer is
   * down): such domains are chosen last.
   */
  degraded: boolean;
};

/**
 * Whether a node may host a shard of a multi-node NVLink replica (docs/architecture.md, placement): every card joined
 * to one domain,
 * fabric health not Unhealthy, IMEX ready with at least one channel. Nodes in no domain at all are not eligible
 * and have no reasons (they are simply not part of one).
 */
export function domainEligibility(
  gpus: readonly { index: number; fabric?: GpuFabric }[],
  imex: { state: string; channels: number; domainState?: string },
): DomainEligibility {
  const f = nodeFabric(gpus);
  // a DEGRADED IMEX domain (some peer not READY) leaves this node in, its own daemon READY (agent/discovery/imex.ts):
  // a node's IMEX readiness is its daemon's `nvidia-imex-ctl -q` alone, "the local IMEX daemon … (not the entire
  // domain)", as NVIDIA/k8s-dra-driver-gpu @ 22407113 cmd/compute-domain-daemon/main.go check() decides it
  const degraded =
    f.degraded.length > 0 || f.health === "Limited Capacity" || imex.domainState?.toUpperCase() === "DEGRADED";
  if (!f.domains.length) return { eligible: false, reasons: [], degraded: false };
  const reasons: string[] = [];
  if (f.domains.length > 1) reasons.push(`GPUs report different NVLink domains (${f.domains.join(", ")})`);
  for (const g of gpus) {
    const why = notJoinedReason(g.fabric);
    if (why) reasons.push(`GPU ${g.index} ${why}`);
    else if (g.fabric?.health?.summary === "Unhealthy") reasons.push(`GPU ${g.index} fabric health Unhealthy`);
  }
  if (imex.state !== "ready") reasons.push(`IMEX ${imex.state}`);
  else if (imex.channels < 1) reasons.push("IMEX has no channel");
  const domain = f.domains.length === 1 ? f.domains[0] : undefined;
  return { ...(domain ? { domain } : {}), eligible: reasons.length === 0, reasons, degraded };
}

/**
 * The NVLink domain a node belongs to: the one most of its cards report (mixed cluster UUIDs: ties go to the lowest
 * key), or undefined when none reports one.
 */
export function homeDomain(gpus: readonly { fabric?: GpuFabric }[]): string | undefined {
  const counts = new Map<string, number>();
  for (const g of gpus) {
    const k = domainKey(g.fabric);
    if (k) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].sort(([a, x], [b, y]) => y - x || compareText(a, b))[0]?.[0];
}
