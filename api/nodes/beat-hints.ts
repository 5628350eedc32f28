// Which heartbeat facts this instance last saw applied to each node's inventory: a hint for which path a heartbeat
// takes, never a fact anything relies on. A heartbeat tries the quick write (a batched statement that checks the
// digest itself) unless the hint says other facts were applied — after this instance registered the node, those its
// inventory implies (none where it implies no valid heartbeat: then the heartbeat takes its transaction at once,
// without a write batch that would change nothing). A node this instance
// knows nothing of (another instance handled its registration and heartbeats, or this one restarted) tries the quick
// write: with several instances behind a load balancer most heartbeats reach an instance that did not handle the
// node's last one, and the stored digest decides. A wrong guess costs one batch that changes nothing.

/** What a heartbeat's route asks and tells: the digest last applied to a node's inventory, as far as it knows. */
export type BeatHints = {
  /** The digest this instance last saw applied to `node` ("": none yet), undefined if unknown. */
  applied(node: string): string | undefined;
  saw(node: string, digest: string): void;
  /**
   * This instance wrote `node`'s registration, with the facts digest of the heartbeat its inventory implies (null: no
   * heartbeat's facts count as applied yet).
   */
  registered(node: string, digest: string | null): void;
};

/** Nodes remembered at most; past that the hints start over. */
export const MAX_BEAT_HINTS = 200_000;

/** An empty set of hints, kept for the life of the instance. */
export function newBeatHints(max = MAX_BEAT_HINTS): BeatHints {
  const digests = new Map<string, string>();
  const saw = (node: string, digest: string) => {
    if (digests.size >= max && !digests.has(node)) digests.clear();
    digests.set(node, digest);
  };
  return { applied: (node) => digests.get(node), saw, registered: (node, digest) => saw(node, digest ?? "") };
}

/** Whether a heartbeat with facts `digest` should try the quick write, by what the instance knows of `node`. */
export const tryQuick = (hints: BeatHints | undefined, node: string, digest: string) => {
  const known = hints?.applied(node);
  return known === undefined || known === digest;
};
