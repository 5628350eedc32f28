// The replica and shard gauges of /metrics: replicas by state, pending replicas, served replicas by model, shards by
// state and each shard's transport verdict. Pure, from one read of the placement rows.
import { ShardState } from "../../shared/schemas/common.js";
import { compareText } from "../../shared/sort.js";
import { shardKey } from "../placement/input.js";
import { policies, type ReplicaState, replicaState, serves } from "../placement/serving.js";
import type { capacityInput, PlacementRows } from "../views/capacity.js";

type Sample = { labels: Record<string, string>; value: number };
type Input = ReturnType<typeof capacityInput>;
const STATES: readonly ReplicaState[] = ["ready", "degraded", "starting", "failed"];

export function replicaFigures(input: Input, rows: PlacementRows) {
  const policy = policies(rows.deployments);
  const shardStates = new Map<string, number>([...ShardState.options, "unknown"].map((x) => [x, 0]));
  const counts = new Map<string, Map<ReplicaState, number>>();
  const servedBy = new Map<string, number>();
  const count = (d: string) => {
    let c = counts.get(d);
    if (!c) counts.set(d, (c = new Map(STATES.map((x) => [x, 0]))));
    return c;
  };
  for (const d of input.deployments) count(d.name);
  const shardTransportOk: Sample[] = [];
  for (const r of input.replicas) {
    const facts = r.shards.map((sh) => {
      const st = rows.stateOf.get(shardKey(sh));
      const t = st?.transport;
      if (t && t.verdict !== "pending" && t.verdict !== "local")
        shardTransportOk.push({
          labels: { node: sh.nodeId, shard: sh.shardId, fabric: sh.fabric, observed: t.via ?? "unknown" },
          value: t.verdict === "ok" ? 1 : 0,
        });
      return { state: st?.state ?? "unknown", transport: t };
    });
    for (const f of facts) shardStates.set(f.state, (shardStates.get(f.state) ?? 0) + 1);
    const state = replicaState(facts);
    const c = count(r.deployment);
    c.set(state, (c.get(state) ?? 0) + 1);
    if (serves(state, policy.get(r.deployment) ?? "require"))
      servedBy.set(r.deployment, (servedBy.get(r.deployment) ?? 0) + 1);
  }
  const replicas: Sample[] = [];
  for (const [deployment, c] of counts)
    for (const [state, value] of c) replicas.push({ labels: { deployment, state }, value });
  const pendingReplicas = input.deployments.map((d) => ({
    labels: { deployment: d.name },
    value: Math.max(0, d.replicas - input.replicas.filter((r) => r.deployment === d.name).length),
  }));
  return {
    replicas,
    pendingReplicas,
    modelReadyReplicas: modelReadiness(input, servedBy),
    shards: [...shardStates].map(([state, value]) => ({ labels: { state }, value })),
    shardTransportOk: shardTransportOk.sort((a, b) => compareText(a.labels.shard!, b.labels.shard!)),
  };
}

/** Served replicas by served model name (as the router routes), for models whose deployments ask for any. */
function modelReadiness(input: Input, servedBy: Map<string, number>): Sample[] {
  const served = new Map(input.models.map((m) => [m.name, m.servedName]));
  const models = new Map<string, { wanted: number; ready: number }>();
  for (const d of input.deployments) {
    const name = served.get(d.model) ?? d.model;
    const m = models.get(name) ?? { wanted: 0, ready: 0 };
    m.wanted += d.replicas;
    m.ready += servedBy.get(d.name) ?? 0;
    models.set(name, m);
  }
  return [...models]
    .filter(([, m]) => m.wanted > 0)
    .sort(([a], [b]) => compareText(a, b))
    .map(([model, m]) => ({ labels: { model }, value: m.ready }));
}
