// Repair (docs/architecture.md, placement rule 6): which placed replicas to free for re-placement — those with a shard
// failed past its restart limit, on a node silent past the grace period, or whose NCCL does not use the transport it
// was placed for (when its deployment requires it) — bounded so that an outage cannot evict the whole fleet.

export type RepairFacts = {
  /**
   * Placed replicas, oldest first, with the nodes and reported states of their shards; `degraded`: the reason of a
   * shard whose transport is not the one placed for, when the deployment requires it.
   */
  replicas: { id: string; shards: { nodeId: string; state: string | undefined; degraded?: string }[] }[];
  /** How many replicas are placed, when `replicas` holds only those that may need repair (the budget's base). */
  replicaCount?: number;
  /** How long nodes have been silent, in ms (0 or absent for a node heard from within nodeLostAfterS). */
  silentMs: Map<string, number>;
  nodeCount: number;
  lostAfterS: number;
  graceS: number;
  /** Replicas repaired in the last minute. */
  recentRepairs: number;
  /** Share of all replicas that may be repaired per minute. */
  maxFraction: number;
};

export type Repairs = {
  /**
   * Replicas to free; `failedOn`: the nodes whose shards failed (their next placement tries other nodes first);
   * `transport`: freed for its transport — only worth it where another set of nodes fits (the caller checks).
   */
  release: { id: string; why: string; failedOn?: string[]; transport?: boolean }[];
  /** Replicas that need repair but wait for the budget of the next minute. */
  deferred: number;
  /** Set when nothing on lost nodes is repaired because too much of the fleet is lost at once. */
  held?: string;
};

/** Chooses the replicas to free now, failed shards first, then those on lost nodes, oldest first within each. */
export function chooseRepairs(f: RepairFacts): Repairs {
  const goneAfter = (f.lostAfterS + f.graceS) * 1000;
  const lostNodes = [...f.silentMs].filter(([, ms]) => ms > f.lostAfterS * 1000).map(([id]) => id);
  const failed = f.replicas
    .filter((r) => r.shards.some((s) => s.state === "failed"))
    .map((r) => ({
      id: r.id,
      why: "a shard failed past its restart limit",
      failedOn: [...new Set(r.shards.filter((s) => s.state === "failed").map((s) => s.nodeId))].sort(),
    }));
  const failedIds = new Set(failed.map((r) => r.id));
  let onLost = f.replicas
    .filter((r) => !failedIds.has(r.id))
    .flatMap((r) => {
      const gone = r.shards.find((s) => (f.silentMs.get(s.nodeId) ?? 0) > goneAfter);
      return gone
        ? [{ id: r.id, why: `node ${gone.nodeId} lost for more than ${f.graceS} s past ${f.lostAfterS} s of silence` }]
        : [];
    });
  let held: string | undefined;
  if (onLost.length && lostNodes.length * 2 > f.nodeCount) {
    held = `${lostNodes.length} of ${f.nodeCount} nodes are lost at once: not re-placing their ${onLost.length} replica(s) (a control-plane or network outage must not evict the fleet)`;
    onLost = [];
  }
  const taken = new Set([...failedIds, ...onLost.map((r) => r.id)]);
  const degraded = f.replicas
    .filter((r) => !taken.has(r.id) && r.shards.some((s) => s.degraded))
    .map((r) => ({
      id: r.id,
      why: r.shards.find((s) => s.degraded)!.degraded!,
      failedOn: [...new Set(r.shards.filter((s) => s.degraded).map((s) => s.nodeId))].sort(),
      transport: true,
    }));
  const wanted = [...failed, ...onLost, ...degraded];
  const budget = Math.max(
    0,
    Math.max(1, Math.floor(f.maxFraction * (f.replicaCount ?? f.replicas.length))) - f.recentRepairs,
  );
  return { release: wanted.slice(0, budget), deferred: Math.max(0, wanted.length - budget), ...(held ? { held } : {}) };
}
