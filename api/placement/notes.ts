// Short notes on what keeps nodes and devices of a class from being used, for the reasons of pending replicas.

import { cardClassOf } from "../../shared/classes.js";
import { compareText } from "../../shared/sort.js";
import type { NodeFit } from "./fit.js";
import { rangeText } from "./ports.js";
import type { PlaceNode } from "./types.js";

/** At most this many notes are spelled out; the rest are counted. */
export const MAX_NOTES = 5;

/** Notes joined with ", ", the ones past `max` counted ("and 3 more"). */
export function joinNotes(notes: readonly string[], max = MAX_NOTES): string {
  if (notes.length <= max) return notes.join(", ");
  return `${notes.slice(0, max).join(", ")} and ${notes.length - max} more`;
}

/**
 * Why nodes that could otherwise take devices of the class do not offer them: the node not schedulable, a device of
 * the class with problems, a card in MIG mode with no device at all and a problem (nothing carved, a mode change
 * pending), a node whose port range is used up. Nodes with neither devices of the class nor such a card say nothing.
 */
export function classNotes(
  nodes: readonly PlaceNode[],
  cls: string,
  fitsById?: ReadonlyMap<string, NodeFit>,
): string[] {
  const out: string[] = [];
  const cardClass = cardClassOf(cls);
  for (const n of nodes) {
    const sick = n.devices.filter((d) => d.class === cls && d.problems.length);
    const bare = n.cards.filter(
      (c) =>
        c.problems?.length &&
        (c.class === undefined || c.class === cardClass) &&
        !n.devices.some((d) => d.card === c.index),
    );
    if (!sick.length && !bare.length && !n.devices.some((d) => d.class === cls)) continue;
    if (!n.schedulable) {
      out.push(`node ${n.id} ${n.notSchedulable ?? "not schedulable"}`);
      continue;
    }
    for (const d of sick.sort((a, b) => a.id - b.id)) out.push(`GPU ${d.label} on ${n.id}: ${d.problems.join("; ")}`);
    for (const c of bare.sort((a, b) => a.index - b.index))
      out.push(`card ${c.index} on ${n.id}: ${c.problems!.join("; ")}`);
    const fit = fitsById?.get(n.id);
    if (fit?.set && fit.ports.length < 2) {
      const why = fit.enginePorts ? ` for a leader (${fit.enginePorts.why})` : "";
      out.push(`node ${n.id} has no free port in ${rangeText(n)}${why}`);
    }
  }
  return out;
}

/** "3 of 8 held by replicas", when some devices of the class are held, for reasons that have nothing better to say. */
export function heldNote(nodes: readonly PlaceNode[], cls: string, free: number): string | undefined {
  let healthy = 0;
  for (const n of nodes)
    if (n.schedulable) for (const d of n.devices) if (d.class === cls && !d.problems.length) healthy++;
  const held = healthy - free;
  return held > 0 ? `${held} of ${healthy} held by replicas` : undefined;
}

/** Trays in order: by tray index (unknown last), then node id. */
export function byTray(a: PlaceNode, b: PlaceNode): number {
  const ta = a.nvlink.trayIndex ?? Number.POSITIVE_INFINITY;
  const tb = b.nvlink.trayIndex ?? Number.POSITIVE_INFINITY;
  return (ta < tb ? -1 : ta > tb ? 1 : 0) || compareText(a.id, b.id);
}

/** How a node of an NVLink domain is named in reasons: its tray when known. */
export function trayName(n: PlaceNode): string {
  return n.nvlink.trayIndex === undefined ? `node ${n.id}` : `tray ${n.nvlink.trayIndex}`;
}

/** A domain key cut for reading: "9f3e2c1a-….2" → "9f3e….2". */
export function shortDomain(key: string): string {
  const dot = key.lastIndexOf(".");
  const uuid = dot < 0 ? key : key.slice(0, dot);
  const clique = dot < 0 ? "" : key.slice(dot);
  return uuid.length > 8 ? `${uuid.slice(0, 4)}…${clique}` : key;
}
