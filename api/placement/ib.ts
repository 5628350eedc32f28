// Multi-node replicas over InfiniBand (docs/architecture.md, placement rule 3): N nodes on one named fabric with an
// active HCA.

import { compareText } from "../../shared/sort.js";
import { compareScores, type NodeFit, pickGang } from "./fit.js";
import type { PlaceNode } from "./types.js";

export type FabricChoice = { fabric: string; gang: NonNullable<ReturnType<typeof pickGang>> };

/** Names of the active HCAs the node has on the fabric, in name order. */
export function activeHcas(node: PlaceNode, fabric: string): string[] {
  const names = node.ibFabrics
    .filter((f) => f.name === fabric)
    .flatMap((f) => f.hcas.filter((h) => h.active).map((h) => h.name));
  return [...new Set(names)].sort();
}

/**
 * The first fabric, by name, with `n` fitting nodes that have an active HCA on it; nodes taken in order of `score`
 * (lower first, node id last), rank 0 the first.
 */
export function chooseFabric(
  all: readonly NodeFit[],
  n: number,
  score: (f: NodeFit) => number[],
): FabricChoice | undefined {
  const names = [...new Set(all.flatMap((f) => f.node.ibFabrics.map((fab) => fab.name)))].sort();
  for (const fabric of names) {
    const members = all.filter((f) => activeHcas(f.node, fabric).length > 0);
    const ordered = members
      .map((f) => ({ f, s: score(f) }))
      .sort((a, b) => compareScores(a.s, b.s) || compareText(a.f.node.id, b.f.node.id))
      .map((x) => x.f);
    const gang = pickGang(ordered, n);
    if (gang) return { fabric, gang };
  }
  return undefined;
}

/**
 * The fabric's active HCAs nearest the shard's cards: each card's nearest listed one (cards in ascending order,
 * deduplicated); all the fabric's active HCAs by name when the cards list none of them.
 */
export function nearestHcas(node: PlaceNode, fabric: string, cards: readonly number[]): string[] {
  const active = new Set(activeHcas(node, fabric));
  const out: string[] = [];
  for (const index of [...new Set(cards)].sort((a, b) => a - b)) {
    const nic = node.cards.find((c) => c.index === index)?.nics.find((x) => active.has(x));
    if (nic && !out.includes(nic)) out.push(nic);
  }
  return out.length ? out : [...active];
}

/**
 * Env of an InfiniBand shard that uses the given HCAs. NCCL reads each name of NCCL_IB_HCA as a prefix unless the
 * list starts with `=` (`mlx5_1` alone also selects mlx5_10 … mlx5_19): the `=` makes it exactly these.
 */
export function ibEnv(hcas: readonly string[]): Record<string, string> {
  return { NCCL_MNNVL_ENABLE: "0", NCCL_IB_HCA: `=${hcas.join(",")}` };
}
