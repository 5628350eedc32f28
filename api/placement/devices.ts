// Free-device selection on one node: the set of devices a shard gets, NVLink peers and one NUMA node preferred.
import type { PlaceCard, PlaceDevice } from "./types.js";

export type DeviceSet = {
  /** Lowest id first. */
  devices: PlaceDevice[];
  /** Every card of the set is an NVLink peer of every other. */
  peers: boolean;
  /** Every card of the set is on the same (known) NUMA node. */
  numa: boolean;
};

/** Search steps allowed per clique search: NVLink graphs are complete or sparse, both resolve in far fewer. */
const STEP_BUDGET = 50_000;

/**
 * The best `k` of the node's free devices (given lowest id first): all NVLink peers and on one NUMA node, else all
 * peers, else one NUMA node, else any; within the best kind, the lowest ids. Undefined when fewer than `k` are free.
 */
export function chooseDevices(
  cards: readonly PlaceCard[],
  free: readonly PlaceDevice[],
  k: number,
): DeviceSet | undefined {
  if (k < 1 || free.length < k) return undefined;
  if (k === 1) return { devices: free.slice(0, 1), peers: true, numa: true };
  const byIndex = new Map(cards.map((c) => [c.index, c]));
  const peer = (a: PlaceDevice, b: PlaceDevice): boolean =>
    !!byIndex.get(a.card)?.nvlinkPeers.includes(b.card) || !!byIndex.get(b.card)?.nvlinkPeers.includes(a.card);
  const groups = numaGroups(free, byIndex);
  const inNumaCliques = groups.map((g) => firstClique(g, k, peer)).filter((s): s is PlaceDevice[] => !!s);
  const both = lowest(inNumaCliques);
  if (both) return { devices: both, peers: true, numa: true };
  const clique = firstClique(free, k, peer);
  if (clique) return { devices: clique, peers: true, numa: false };
  const numa = lowest(groups.filter((g) => g.length >= k).map((g) => g.slice(0, k)));
  if (numa) return { devices: numa, peers: false, numa: true };
  return { devices: free.slice(0, k), peers: false, numa: false };
}

/** Free devices grouped by their card's NUMA node (unknown NUMA nodes form no group), each lowest id first. */
function numaGroups(free: readonly PlaceDevice[], byIndex: Map<number, PlaceCard>): PlaceDevice[][] {
  const groups = new Map<number, PlaceDevice[]>();
  for (const d of free) {
    const numa = byIndex.get(d.card)?.numaNode;
    if (numa === null || numa === undefined) continue;
    groups.set(numa, [...(groups.get(numa) ?? []), d]);
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([, g]) => g);
}

/** The lexicographically first set of `k` devices that are pairwise peers, by a bounded depth-first search. */
function firstClique(
  devices: readonly PlaceDevice[],
  k: number,
  peer: (a: PlaceDevice, b: PlaceDevice) => boolean,
): PlaceDevice[] | undefined {
  let steps = 0;
  const grow = (chosen: PlaceDevice[], rest: readonly PlaceDevice[]): PlaceDevice[] | undefined => {
    if (chosen.length === k) return chosen;
    for (let i = 0; i < rest.length && chosen.length + rest.length - i >= k; i++) {
      if (++steps > STEP_BUDGET) return undefined;
      const d = rest[i]!;
      const found = grow(
        [...chosen, d],
        rest.slice(i + 1).filter((e) => peer(d, e)),
      );
      if (found) return found;
    }
    return undefined;
  };
  return devices.length >= k ? grow([], devices) : undefined;
}

/** The set whose ids, compared in order, are lowest. */
function lowest(sets: PlaceDevice[][]): PlaceDevice[] | undefined {
  const cmp = (a: PlaceDevice[], b: PlaceDevice[]): number => {
    for (let i = 0; i < a.length; i++) if (a[i]!.id !== b[i]!.id) return a[i]!.id - b[i]!.id;
    return 0;
  };
  return [...sets].sort(cmp)[0];
}
