// How one node fits one shard of a profile: its free devices, the set it would give, the ports it has left.
import type { LeaderPorts } from "../../shared/engines.js";
import { chooseDevices, type DeviceSet } from "./devices.js";
import { heldOn, type Ledger, shardsOn, versionOf } from "./ledger.js";
import { shardPorts } from "./ports.js";
import { freeDevices } from "./scope.js";
import type { PlaceNode, Shard } from "./types.js";

export type NodeFit = {
  node: PlaceNode;
  /** How many devices of the class are free on the node. */
  free: number;
  /** The devices a shard would get; undefined when fewer than needed are free. */
  set?: DeviceSet;
  /**
   * The ports a shard would get (ports.ts shardPorts): its http port, then, when it can lead, the leader port and the
   * engine's own ports.
   */
  ports: number[];
  /** The ports the engine takes beyond http and leader, when it takes any (shared/engines.ts leaderPorts). */
  enginePorts?: LeaderPorts;
};

/**
 * How the node fits a shard of `k` devices of the class; with `network` (the replica talks to peers), sets whose
 * nearest NICs are active and distinct first.
 */
export function fitNode(
  node: PlaceNode,
  cls: string,
  k: number,
  ledger: Ledger,
  network = false,
  enginePorts?: LeaderPorts,
): NodeFit {
  const free = freeDevices(node, cls, ledger);
  const set = chooseDevices(node.cards, free, k, network ? { activeNics: new Set(node.activeNics ?? []) } : undefined);
  const ports = shardPorts(node, ledger, enginePorts?.offsets);
  return { node, free: free.length, ...(set ? { set } : {}), ports, ...(enginePorts ? { enginePorts } : {}) };
}

/**
 * Fits already worked out, by class and device count, then by node: each with the ledger and ledger version it saw,
 * the shards then on the node and what they held. Kept across plan() calls (placement's cache): a fit from an earlier
 * plan is reused when the same shards (the same objects: a shard's devices and ports never change) or the same
 * devices and ports are held on the node now.
 */
export type FitCache = Map<
  string,
  WeakMap<PlaceNode, { ledger: Ledger; version: number; shards: readonly Shard[]; held: string; fit: NodeFit }>
>;

const sameItems = <T>(a: readonly T[], b: readonly T[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * fitNode of one node, reused while nothing was added on it since (most nodes, most of the time, in a large plan, and
 * in the next plan).
 */
export function fitGetter(
  cache: FitCache,
  cls: string,
  k: number,
  ledger: Ledger,
  network = false,
  enginePorts?: LeaderPorts,
): (node: PlaceNode) => NodeFit {
  const key = `${cls}\u0000${k}\u0000${network ? "net" : ""}\u0000${enginePorts?.offsets.join(",") ?? ""}`;
  let byNode = cache.get(key);
  if (!byNode) cache.set(key, (byNode = new WeakMap()));
  const mine = byNode;
  return (node) => {
    const version = versionOf(ledger, node.id);
    const hit = mine.get(node);
    if (hit && hit.ledger === ledger && hit.version === version) return hit.fit;
    const on = shardsOn(ledger, node.id);
    // the same shards as then (the next plan, over the same replicas), or else the same devices and ports held
    const same = !!hit && sameItems(hit.shards, on);
    if (hit && (same || hit.held === heldOn(ledger, node.id))) {
      hit.ledger = ledger;
      hit.version = version;
      if (!same) hit.shards = [...on];
      return hit.fit;
    }
    const fit = fitNode(node, cls, k, ledger, network, enginePorts);
    mine.set(node, { ledger, version, shards: [...on], held: heldOn(ledger, node.id), fit });
    return fit;
  };
}

/** fitGetter's fit of every node. */
export function cachedFits(
  cache: FitCache,
  nodes: readonly PlaceNode[],
  cls: string,
  k: number,
  ledger: Ledger,
  network = false,
  enginePorts?: LeaderPorts,
): NodeFit[] {
  return nodes.map(fitGetter(cache, cls, k, ledger, network, enginePorts));
}

/** True when the node can host the shard, as leader (http, leader and the engine's ports) or as a follower (http). */
export function fits(f: NodeFit, leader: boolean): f is NodeFit & { set: DeviceSet } {
  return !!f.set && f.ports.length >= (leader ? 2 : 1);
}

/** Compares score tuples element by element. */
export function compareScores(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Picks a gang of `n` from fits in preference order: the first that can lead is rank 0, then the next n - 1 in order.
 */
export function pickGang(ordered: readonly NodeFit[], n: number): (NodeFit & { set: DeviceSet })[] | undefined {
  const leader = ordered.find((f) => fits(f, true));
  if (!leader || !fits(leader, true)) return undefined;
  const rest = ordered.filter((f) => f !== leader && fits(f, false)).slice(0, n - 1);
  if (rest.length < n - 1) return undefined;
  return [leader, ...(rest as (NodeFit & { set: DeviceSet })[])];
}
