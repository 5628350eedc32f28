// The cluster's gauges on /metrics, read from the database at every scrape, so every API instance reports the same
// values: their definitions, clusterFigures() (pure) and readClusterFigures(). prom-client serves them on Node
// (cluster.ts), the Worker renders them itself (exposition.ts). No runtime import of prom-client here.
import { ShardState } from "../../shared/schemas/common.js";
import { NodeState } from "../../shared/schemas/node.js";
import { byText, compareText } from "../../shared/sort.js";
import type { Q } from "../db/client.js";
import { nodes } from "../db/schema.js";
import { nodeState } from "../nodes/state.js";
import { classCapacity } from "../placement/capacity.js";
import type { PlacementCache } from "../placement/rows.js";
import { readPlacementRows } from "../placement/rows.js";
import { capacityInput, type PlacementRows } from "../views/capacity.js";
import { type NvlinkCache, type NvlinkInput, nvlinkView, readNvlinkInput } from "../views/nvlink.js";

type Labels = Record<string, string>;
type Sample = { labels: Labels; value: number };

/** Every cluster gauge: name, help and label names. */
export const GAUGES = {
  gpuNvlinkJoined: {
    name: "llmgw_gpu_nvlink_joined",
    help: "1 when the GPU is joined to its multi-node NVLink domain (fabric Completed, Success, non-zero cluster UUID), else 0; GPUs of nodes in a domain only",
    labelNames: ["node", "gpu", "domain"],
  },
  imexUp: {
    name: "llmgw_imex_up",
    help: "1 when the node's IMEX daemon is ready, else 0; nodes in an NVLink domain or reporting IMEX",
    labelNames: ["node"],
  },
  nvlinkTrayEligible: {
    name: "llmgw_nvlink_tray_eligible",
    help: "1 when the tray can take multi-node NVLink shards (node ready, every card joined, fabric healthy, IMEX ready with a channel), else 0; nodes of a multi-node NVLink domain only",
    labelNames: ["node", "domain"],
  },
  imexChannels: {
    name: "llmgw_imex_channels",
    help: "IMEX channels the node has; nodes in an NVLink domain or reporting IMEX",
    labelNames: ["node"],
  },
  nodeUp: {
    name: "llmgw_node_up",
    help: "1 when the node was heard from within the lost limit, 0 when it is lost",
    labelNames: ["node"],
  },
  nodes: { name: "llmgw_nodes", help: "Nodes by state (ready, cordoned, draining, lost)", labelNames: ["state"] },
  nodeHeartbeatAge: {
    name: "llmgw_node_heartbeat_age_seconds",
    help: "Seconds since the node's last heartbeat (since its registration before the first one)",
    labelNames: ["node"],
  },
  devices: {
    name: "llmgw_devices",
    help: "Devices placement hands out (whole GPUs and MIG instances) by class and state: free, used by shards, unavailable (node not ready or the device has a problem)",
    labelNames: ["class", "state"],
  },
  replicas: {
    name: "llmgw_replicas",
    help: "Placed replicas by deployment and state: ready (every shard ready), failed (a shard failed), starting",
    labelNames: ["deployment", "state"],
  },
  pendingReplicas: {
    name: "llmgw_pending_replicas",
    help: "Replicas a deployment asks for that are not placed",
    labelNames: ["deployment"],
  },
  modelReadyReplicas: {
    name: "llmgw_model_ready_replicas",
    help: "Ready replicas (every shard ready) by served model name, for each model whose deployments ask for replicas; 0: the router answers 503 for it",
    labelNames: ["model"],
  },
  shards: {
    name: "llmgw_shards",
    help: "Placed shards by the state their agent last reported (unknown before the first report)",
    labelNames: ["state"],
  },
} as const;

export type ClusterFigures = Record<keyof typeof GAUGES, Sample[]>;

export const PLACEMENT_DURATION = {
  type: "histogram",
  name: "llmgw_placement_duration_seconds",
  help: "Placement runs of this API instance (the cluster had changed), from the generation check to commit",
  labelNames: [],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
} as const;

export const CLUSTER_UP = {
  name: "llmgw_cluster_metrics_up",
  help: "1 when this scrape read the cluster's state from the database, else 0 (the cluster gauges are then absent)",
} as const;

export const DATABASE_UP = {
  name: "llmgw_database_up",
  help: "1 when the database answered this scrape's reads, else 0 (this instance cannot reach it)",
} as const;

/** Every cluster gauge's samples from one read of the database. Pure. */
export function clusterFigures(s: {
  rows: PlacementRows;
  nvlink: NvlinkInput;
  now: number;
  lostAfterS: number;
}): ClusterFigures {
  const { rows, now, lostAfterS } = s;
  const input = capacityInput(rows, now, lostAfterS);
  const out: ClusterFigures = {
    gpuNvlinkJoined: [],
    imexUp: [],
    nvlinkTrayEligible: [],
    imexChannels: [],
    nodeUp: [],
    nodes: [],
    nodeHeartbeatAge: [],
    devices: [],
    replicas: [],
    pendingReplicas: [],
    modelReadyReplicas: [],
    shards: [],
  };

  const byState = new Map<string, number>(NodeState.options.map((x) => [x, 0]));
  for (const n of [...rows.nodes].sort(byText((n) => n.id))) {
    const state = nodeState(n, now, lostAfterS);
    byState.set(state, (byState.get(state) ?? 0) + 1);
    out.nodeUp.push({ labels: { node: n.id }, value: state === "lost" ? 0 : 1 });
    out.nodeHeartbeatAge.push({
      labels: { node: n.id },
      value: Math.max(0, now - (n.lastHeartbeatAt ?? n.registeredAt)) / 1000,
    });
  }
  for (const [state, value] of byState) out.nodes.push({ labels: { state }, value });

  const view = nvlinkView(s.nvlink);
  const trays = new Set<string>();
  for (const d of view.domains) {
    for (const t of d.trays) {
      trays.add(t.node);
      out.nvlinkTrayEligible.push({ labels: { node: t.node, domain: d.key }, value: t.eligible ? 1 : 0 });
      for (const g of t.gpus)
        out.gpuNvlinkJoined.push({
          labels: { node: t.node, gpu: String(g.index), domain: g.domain ?? d.key },
          value: g.joined ? 1 : 0,
        });
    }
  }
  for (const n of s.nvlink.nodes) {
    if (!trays.has(n.id) && n.imex.state === "absent") continue;
    out.imexUp.push({ labels: { node: n.id }, value: n.imex.state === "ready" ? 1 : 0 });
    out.imexChannels.push({ labels: { node: n.id }, value: n.imex.channels });
  }

  for (const c of classCapacity(input)) {
    const unavailable = c.unavailable.reduce((sum, u) => sum + u.count, 0);
    for (const [state, value] of [
      ["free", c.free],
      ["used", c.used],
      ["unavailable", unavailable],
    ] as const)
      out.devices.push({ labels: { class: c.class, state }, value });
  }

  const stateOf = new Map(rows.states.map((x) => [`${x.nodeId}/${x.shardId}`, x.state as string]));
  const shardStates = new Map<string, number>([...ShardState.options, "unknown"].map((x) => [x, 0]));
  const replicaStates = new Map<string, Record<"ready" | "starting" | "failed", number>>();
  for (const d of input.deployments) replicaStates.set(d.name, { ready: 0, starting: 0, failed: 0 });
  for (const r of input.replicas) {
    const states = r.shards.map((sh) => stateOf.get(`${sh.nodeId}/${sh.shardId}`) ?? "unknown");
    for (const st of states) shardStates.set(st, (shardStates.get(st) ?? 0) + 1);
    const state = states.includes("failed")
      ? "failed"
      : states.length && states.every((x) => x === "ready")
        ? "ready"
        : "starting";
    const counts = replicaStates.get(r.deployment) ?? { ready: 0, starting: 0, failed: 0 };
    counts[state]++;
    replicaStates.set(r.deployment, counts);
  }
  for (const [deployment, counts] of replicaStates)
    for (const [state, value] of Object.entries(counts)) out.replicas.push({ labels: { deployment, state }, value });
  for (const d of input.deployments) {
    const placed = input.replicas.filter((r) => r.deployment === d.name).length;
    out.pendingReplicas.push({ labels: { deployment: d.name }, value: Math.max(0, d.replicas - placed) });
  }
  out.modelReadyReplicas = modelReadiness(input, replicaStates);
  for (const [state, value] of shardStates) out.shards.push({ labels: { state }, value });
  return out;
}

/** Ready replicas by served model name (as the router routes), for models whose deployments ask for any. */
function modelReadiness(
  input: ReturnType<typeof capacityInput>,
  replicaStates: Map<string, Record<"ready" | "starting" | "failed", number>>,
): Sample[] {
  const served = new Map(input.models.map((m) => [m.name, m.servedName]));
  const models = new Map<string, { wanted: number; ready: number }>();
  for (const d of input.deployments) {
    const name = served.get(d.model) ?? d.model;
    const m = models.get(name) ?? { wanted: 0, ready: 0 };
    m.wanted += d.replicas;
    m.ready += replicaStates.get(d.name)?.ready ?? 0;
    models.set(name, m);
  }
  return [...models]
    .filter(([, m]) => m.wanted > 0)
    .sort(([a], [b]) => compareText(a, b))
    .map(([model, m]) => ({ labels: { model }, value: m.ready }));
}

/** Reads what the cluster gauges are computed from (the database's part of a scrape). */
export async function readClusterInput(
  db: Q,
  now: number,
  lostAfterS: number,
  placementCache: PlacementCache,
  nvlinkCache: NvlinkCache,
): Promise<{ rows: PlacementRows; nvlink: NvlinkInput }> {
  const rows = await readPlacementRows(db, placementCache, now - lostAfterS * 1000);
  const nvlink = await readNvlinkInput(db, now, lostAfterS, nvlinkCache);
  // every node's own liveness (placement's rows carry only whether it is silent): the up and heartbeat-age gauges
  const heard = new Map(
    (
      await db
        .select({ id: nodes.id, lastSeenAt: nodes.lastSeenAt, lastHeartbeatAt: nodes.lastHeartbeatAt })
        .from(nodes)
    ).map((n) => [n.id, n]),
  );
  return { rows: { ...rows, nodes: rows.nodes.map((n) => ({ ...n, ...heard.get(n.id) })) }, nvlink };
}

/** Reads the database once and computes every cluster gauge's samples. */
export async function readClusterFigures(
  db: Q,
  now: number,
  lostAfterS: number,
  placementCache: PlacementCache,
  nvlinkCache: NvlinkCache,
): Promise<ClusterFigures> {
  return clusterFigures({
    ...(await readClusterInput(db, now, lostAfterS, placementCache, nvlinkCache)),
    now,
    lostAfterS,
  });
}

/** What one scrape read: whether the database answered, and every cluster gauge's samples when they could be made. */
export type ClusterScrape = { databaseUp: boolean; figures?: ClusterFigures; error?: string };

/**
 * One scrape's read of the cluster, never throwing: a failed read (the database) and a failed computation (the figures
 * alone) are told apart, so that `llmgw_database_up` says only the first.
 */
export async function scrapeCluster(
  db: Q,
  now: number,
  lostAfterS: number,
  placementCache: PlacementCache,
  nvlinkCache: NvlinkCache,
): Promise<ClusterScrape> {
  let input: Awaited<ReturnType<typeof readClusterInput>>;
  try {
    input = await readClusterInput(db, now, lostAfterS, placementCache, nvlinkCache);
  } catch (e) {
    return { databaseUp: false, error: String(e) };
  }
  try {
    return { databaseUp: true, figures: clusterFigures({ ...input, now, lostAfterS }) };
  } catch (e) {
    return { databaseUp: true, error: String(e) };
  }
}
