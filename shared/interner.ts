// One object for equal values. What placement and the NVLink view keep of each node's inventory is mostly the same
// from node to node — the cards and their NVLink peers of one kind of board, the agent's engines, a domain's fabric —
// and a fleet of 10,000 nodes kept 10,000 copies of it, a few KiB each. An interner hands back the first copy it saw
// of an equal value (frozen, so that no holder can change it under the others); what differs per node (a card's UUID)
// stays with the node.

/** At most this many distinct values are remembered; past it the interner starts afresh (values held stay valid). */
const LIMIT = 4096;

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/**
 * `share(value)`: an equal value seen before (equal as JSON: plain data only — objects, arrays, strings, numbers,
 * booleans, null), or `value` itself, frozen, from now on the one handed out.
 */
export function interner(limit = LIMIT) {
  const seen = new Map<string, unknown>();
  return <T>(value: T): T => {
    const key = typeof value === "string" ? `s${value}` : `j${JSON.stringify(value)}`;
    const had = seen.get(key);
    if (had !== undefined) return had as T;
    if (seen.size >= limit) seen.clear();
    seen.set(key, deepFreeze(value));
    return value;
  };
}
