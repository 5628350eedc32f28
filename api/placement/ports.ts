// Port allocation: the lowest ports of a node's range that no shard on it uses.
import type { Ledger } from "./ledger.js";
import type { PlaceNode } from "./types.js";

/** Up to `count` free ports of the node, lowest first (fewer when the range is used up). */
export function freePorts(node: PlaceNode, ledger: Ledger, count: number): number[] {
  const used = ledger.get(node.id)?.ports;
  const out: number[] = [];
  for (let p = node.portRange.first; p <= node.portRange.last && out.length < count; p++) {
    if (!used?.has(p)) out.push(p);
  }
  return out;
}

/** The node's port range as people write it: "8000-8099". */
export function rangeText(node: PlaceNode): string {
  return `${node.portRange.first}-${node.portRange.last}`;
}
