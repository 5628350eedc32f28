// Which heartbeat facts this instance last saw applied to each node's inventory: a hint for which path a heartbeat
// takes, never a fact anything relies on. A heartbeat whose facts' digest matches tries the quick write (a batched
// statement that checks the digest itself); any other takes its transaction at once, without a write batch that would
// change nothing — after every registration, each node's first heartbeat. With several instances each learns a node's
// digest from the heartbeats it handles; a stale hint costs one batch that changes nothing.

/** What a heartbeat's route asks and tells: the digest last applied to a node's inventory, as far as it knows. */
export type BeatHints = { applied(node: string): string | undefined; saw(node: string, digest: string): void };

/** Nodes remembered at most; past that the hints start over (each node's next heartbeat takes its full path). */
export const MAX_BEAT_HINTS = 200_000;

/** An empty set of hints, kept for the life of the instance. */
export function newBeatHints(max = MAX_BEAT_HINTS): BeatHints {
  const digests = new Map<string, string>();
  return {
    applied: (node) => digests.get(node),
    saw(node, digest) {
      if (digests.size >= max && !digests.has(node)) digests.clear();
      digests.set(node, digest);
    },
  };
}
