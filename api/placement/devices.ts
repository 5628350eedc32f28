// Free-device selection on one node: the set of devices a shard gets, NVLink peers and one NUMA node preferred.
import type { PlaceCard, PlaceDevice } from "./types.js";

export type DeviceSet = {
  /** Lowest id first. */
  devices: PlaceDevice[];
  /** Every card of the set is an NVLink peer of every other. */
  peers: boolean;
  /** Every card of the set is on the same (known) NUMA node. */
  numa: boolean;
  /** Asked for a set that uses the network: every card's nearest NIC is active, and no two share one. */
  nics?: boolean;
};

/** Search steps allowed per clique search: NVLink graphs are complete or sparse, both resolve in far fewer. */
const STEP_BUDGET = 50_000;

/**
 * The best `k` of the node's free devices (given lowest id first): all NVLink peers and on one NUMA node, else all
 * peers, else one NUMA node, else any; within the best kind, the lowest ids. Undefined when fewer than `k` are free.
 * With `network` (a replica that talks to peers over it), sets whose cards' nearest NICs are active and distinct come
 * first, in the same order; when no set has them, the choice is as without.
 */
export function chooseDevices(
  cards: readonly PlaceCard[],
  free: readonly PlaceDevice[],
  k: number,
  network?: { activeNics: ReadonlySet<string> },
): DeviceSet | undefined {
  if (k < 1 || free.length < k) return undefined;
  const byIndex = cardsByIndex(cards);
  if (network) {
    const nic = (d: PlaceDevice) => byIndex.get(d.card)?.nics[0];
    const usable = free.filter((d) => {
      const n = nic(d);
      return n !== undefined && network.activeNics.has(n);
    });
    const distinct = (a: PlaceDevice, b: PlaceDevice) => nic(a) !== nic(b);
    const set = chooseAmong(byIndex, usable, k, distinct);
    if (set) return { ...set, nics: true };
    const plain = chooseAmong(byIndex, free, k);
    return plain && { ...plain, nics: false };
  }
  return chooseAmong(byIndex, free, k);
}

const indexed = new WeakMap<readonly PlaceCard[], Map<number, PlaceCard>>();
/** The node's cards by index, made once per cards array (a node's fit is worked out for every node of a fleet). */
function cardsByIndex(cards: readonly PlaceCard[]): Map<number, PlaceCard> {
  let m = indexed.get(cards);
  if (!m) indexed.set(cards, (m = new Map(cards.map((c) => [c.index, c]))));
  return m;
}

/** chooseDevices' search over `free`, every pair of the set also passing `also`. */
function chooseAmong(
  byIndex: Map<number, PlaceCard>,
  free: readonly PlaceDevice[],
  k: number,
  also: (a: PlaceDevice, b: PlaceDevice) => boolean = () => true,
): DeviceSet | undefined {
  if (free.length < k) return undefined;
  if (k === 1) return { devices: free.slice(0, 1), peers: true, numa: true };
  const linked = (a: PlaceDevice, b: PlaceDevice): boolean =>
    !!byIndex.get(a.card)?.nvlinkPeers.includes(b.card) || !!byIndex.get(b.card)?.nvlinkPeers.includes(a.card);
  if (free.length === k) return wholeSet(byIndex, free, linked, also);
  const peer = (a: PlaceDevice, b: PlaceDevice) => linked(a, b) && also(a, b);
  const groups = numaGroups(free, byIndex);
  const inNumaCliques = groups.map((g) => firstClique(g, k, peer)).filter((s): s is PlaceDevice[] => !!s);
  const both = lowest(inNumaCliques);
  if (both) return { devices: both, peers: true, numa: true };
  const clique = firstClique(free, k, peer);
  if (clique) return { devices: clique, peers: true, numa: false };
  const numa = lowest(groups.map((g) => firstClique(g, k, also)).filter((s): s is PlaceDevice[] => !!s));
  if (numa) return { devices: numa, peers: false, numa: true };
  const any = firstClique(free, k, also);
  return any && { devices: any, peers: false, numa: false };
}

/**
 * Exactly `k` free (a whole node for a replica: the common case at fleet size, where every node's fit is worked out):
 * the set is all of them when every pair passes `also`, and it is what the search would call it — peers when every
 * pair is linked, one NUMA node when every card is on the same known one — found without searching.
 */
function wholeSet(
  byIndex: Map<number, PlaceCard>,
  free: readonly PlaceDevice[],
  linked: (a: PlaceDevice, b: PlaceDevice) => boolean,
  also: (a: PlaceDevice, b: PlaceDevice) => boolean,
): DeviceSet | undefined {
  let peers = true;
  for (let i = 0; i < free.length; i++)
    for (let j = i + 1; j < free.length; j++) {
      if (!also(free[i]!, free[j]!)) return undefined;
      if (peers && !linked(free[i]!, free[j]!)) peers = false;
    }
  const first = byIndex.get(free[0]!.card)?.numaNode;
  const numa = first !== null && first !== undefined && free.every((d) => byIndex.get(d.card)?.numaNode === first);
  return { devices: [...free], peers, numa };
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
