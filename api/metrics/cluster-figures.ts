// The cluster's gauges on /metrics, read from the database at every scrape, so every API instance reports the same
// values: their definitions, clusterFigures() (pure) and readClusterFigures(). Node (cluster.ts) and the Worker
// (isolate.ts) render them alike (cluster-text.ts). No runtime import of prom-client here.
import { nextTurn } from "../../shared/next-turn.js";
import { NodeState } from "../../shared/schemas/node.js";
import { byText } from "../../shared/sort.js";
import type { Q } from "../db/client.js";
import { nodeState } from "../nodes/state.js";
import { classCapacity } from "../placement/capacity.js";
import type { PlacementCache } from "../placement/rows.js";
import { readPlacementRows } from "../placement/rows.js";
import { capacityInput, type PlacementRows } from "../views/capacity.js";
import { type NvlinkCache, type NvlinkInput, nvlinkView, readNvlinkInput } from "../views/nvlink.js";
import { replicaFigures } from "./replica-figures.js";

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
    help: "Placed replicas by deployment and state: ready (every shard ready), degraded (every shard ready, one's NCCL not on the transport it was placed for), failed (a shard failed), starting",
    labelNames: ["deployment", "state"],
  },
  pendingReplicas: {
    name: "llmgw_pending_replicas",
    help: "Replicas a deployment asks for that are not placed",
    labelNames: ["deployment"],
  },
  modelReadyReplicas: {
    name: "llmgw_model_ready_replicas",
    help: "Replicas the router serves (every shard ready; a degraded one only under its deployment's transport: prefer) by served model name, for each model whose deployments ask for replicas; 0: the router answers 503 for it",
    labelNames: ["model"],
  },
  shards: {
    name: "llmgw_shards",
    help: "Placed shards by the state their agent last reported (unknown before the first report)",
    labelNames: ["state"],
  },
  shardTransportOk: {
    name: "llmgw_shard_transport_ok",
    help: "1 when the shard's NCCL uses the transport it was placed on (fabric: single, nvlink:<domain>, ib:<fabric>; observed: NET/IB, NET/Socket, MNNVL, P2P, SHM, unknown), 0 when it is degraded or its engine served without NCCL saying; shards whose agent reported a transport only",
    labelNames: ["node", "shard", "fabric", "observed"],
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
    shardTransportOk: [],
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

  Object.assign(out, replicaFigures(input, rows));
  return out;
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
  // a scrape at fleet size holds the event loop for each of its parts: other requests go between them
  await nextTurn();
  const { liveness, ...nvlink } = await readNvlinkInput(db, now, lostAfterS, nvlinkCache);
  // every node's own liveness (placement's rows carry only whether it is silent): the up and heartbeat-age gauges
  return { rows: { ...rows, nodes: rows.nodes.map((n) => ({ ...n, ...liveness.get(n.id) })) }, nvlink };
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
  await nextTurn();
  try {
    return { databaseUp: true, figures: clusterFigures({ ...input, now, lostAfterS }) };
  } catch (e) {
    return { databaseUp: true, error: String(e) };
  }
}
