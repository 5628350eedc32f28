// Port allocation: the lowest ports of a node's range that no shard on it uses.
import type { Ledger } from "./ledger.js";
import type { PlaceNode } from "./types.js";

/**
 * The ports a shard would get on the node: `[http]` when it can only follow, `[http, leader, ...]` when it can lead,
 * `[]` when nothing is free. http is the lowest free port; leader the next one for which the engine's own ports
 * (leader + each of `offsets`) are free and in range too, and those follow it.
 */
export function shardPorts(node: PlaceNode, ledger: Ledger, offsets: readonly number[] = []): number[] {
  const used = ledger.get(node.id)?.ports;
  const { first, last } = node.portRange;
  const free = (p: number) => p <= last && !used?.has(p);
  let http = first;
  while (http <= last && !free(http)) http++;
  if (http > last) return [];
  for (let leader = http + 1; leader <= last; leader++) {
    const extra = offsets.map((o) => leader + o);
    if (free(leader) && extra.every(free)) return [http, leader, ...extra];
  }
  return [http];
}

/** The node's port range as people write it: "8000-8099". */
export function rangeText(node: PlaceNode): string {
  return `${node.portRange.first}-${node.portRange.last}`;
}
