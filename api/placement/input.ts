// Rows from the database → PlanInput. Pure: the transaction in apply.ts reads the rows and hands them in.
import { devicesOf } from "../../shared/classes.js";
import { domainEligibility } from "../../shared/fabric.js";
import { interner } from "../../shared/interner.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { DeploymentSpec } from "../../shared/schemas/deployment.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { type ModelSpec, profileShape } from "../../shared/schemas/model.js";
import type { NodeState } from "../../shared/schemas/node.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";
import { nodeState } from "../nodes/state.js";
import { policies, replicaState, serves, type TransportPolicy } from "./serving.js";
import type { PlaceDeployment, PlaceModel, PlaceNode, PlanInput, Replica } from "./types.js";

export const DEFAULT_PORT_RANGE = { first: 20000, last: 20999 };
export const DEFAULT_STARTUP_TIMEOUT_S = 1800;

type NodeRow = {
  id: string;
  mgmtAddr: string;
  mgmtInterface: string | null;
  pool: string;
  labels: Record<string, string>;
  adminState: "ready" | "cordoned" | "draining";
  lastSeenAt: number;
  portFirst: number | null;
  portLast: number | null;
};
type SpecRow = { name: string; spec: string };
type ReplicaRow = { id: string; deployment: string; profile: string; fingerprint: string; seq: number };
type ShardRow = { id: string; replicaId: string; nodeId: string; rank: number; spec: string };

/** What placement derives from a node's inventory alone: the costly part, kept while the inventory is unchanged. */
export type NodeFacts = Pick<
  PlaceNode,
  | "engines"
  | "engineVersions"
  | "engineBackends"
  | "activeNics"
  | "devices"
  | "cards"
  | "nvlink"
  | "ibFabrics"
  | "weights"
>;

/** The facts many nodes share (the same board, engines, fabric), kept once. */
const share = interner();

/** Devices with their problems, topology, NVLink eligibility and IB fabrics of an inventory. */
export function nodeFacts(inventory: string | Inventory): NodeFacts {
  const inv = typeof inventory === "string" ? (JSON.parse(inventory) as Inventory) : inventory;
  const problems = new Map(inv.gpus.map((g) => [g.index, g.health.problems]));
  const instanceProblems = new Map(
    inv.gpus.flatMap((g) => (g.mig?.instances ?? []).map((m) => [`${g.index}/${m.index}`, m.problems ?? []] as const)),
  );
  const activeHcas = new Map(
    inv.hcas.map((h) => [h.name, { active: h.ports.some((p) => p.state === "ACTIVE"), numaNode: h.numaNode ?? null }]),
  );
  const nvlink = domainEligibility(inv.gpus, inv.imex);
  const tray = inv.gpus.find((g) => g.platform?.trayIndex !== undefined)?.platform?.trayIndex;
  return {
    engines: share(Object.keys(inv.engines.versions).sort()),
    engineVersions: share({ ...inv.engines.versions }),
    engineBackends: share({ ...inv.engines.backends }),
    activeNics: share(inv.hcas.filter((h) => h.ports.some((p) => p.state === "ACTIVE")).map((h) => h.name)),
    // a device's UUID is its own; the rest is its board's
    devices: devicesOf(inv.gpus).map((d) => ({
      id: d.id,
      label: share(d.label),
      class: share(d.class),
      card: d.card,
      ...(d.migIndex === undefined ? {} : { migIndex: d.migIndex }),
      uuid: d.uuid,
      // a card's problems hold for each of its MIG instances; an instance's own (a process on it) for it alone
      problems: share([
        ...(problems.get(d.card) ?? []),
        ...(d.migIndex === undefined ? [] : (instanceProblems.get(`${d.card}/${d.migIndex}`) ?? [])),
      ]),
    })),
    cards: share(
      inv.gpus.map((g) => ({
        index: g.index,
        numaNode: g.numaNode ?? null,
        nvlinkPeers: g.nvlinkPeers.map((p) => p.gpu),
        nics: g.nics.map((n) => n.nic),
        class: g.class,
        problems: [...g.health.problems],
      })),
    ),
    nvlink: share({ ...nvlink, ...(tray === undefined ? {} : { trayIndex: tray }) }),
    ibFabrics: share(
      inv.fabrics.map((f) => ({
        name: f.fabric,
        hcas: f.hcas.map((h) => ({
          name: h,
          active: activeHcas.get(h)?.active ?? false,
          numaNode: activeHcas.get(h)?.numaNode ?? null,
        })),
      })),
    ),
    weights: share(inv.weights.map((w) => w.path)),
  };
}

/** The PlaceNode made of each row object, with the state it was made in: the same object while neither changes. */
const made = new WeakMap<object, { state: string; facts: NodeFacts; node: PlaceNode }>();

/** A node as placement sees it: its row's state and settings, with the facts of its inventory. */
export function placeNode(row: NodeRow, facts: NodeFacts, now: number, lostAfterS: number): PlaceNode {
  const state = nodeState(row, now, lostAfterS);
  const had = made.get(row);
  if (had && had.state === state && had.facts === facts) return had.node;
  const node = makePlaceNode(row, facts, state);
  made.set(row, { state, facts, node });
  return node;
}

function makePlaceNode(row: NodeRow, facts: NodeFacts, state: NodeState): PlaceNode {
  return {
    id: row.id,
    mgmtAddr: row.mgmtAddr,
    ...(row.mgmtInterface ? { mgmtInterface: row.mgmtInterface } : {}),
    pool: row.pool,
    labels: row.labels,
    schedulable: state === "ready",
    ...(state === "ready" ? {} : { notSchedulable: state }),
    ...facts,
    portRange:
      row.portFirst !== null && row.portLast !== null
        ? { first: row.portFirst, last: row.portLast }
        : DEFAULT_PORT_RANGE,
  };
}

/** A model with every profile's defaults filled in. */
export function placeModel(row: SpecRow): PlaceModel {
  const spec = JSON.parse(row.spec) as ModelSpec;
  return {
    name: row.name,
    servedName: spec.servedName ?? row.name,
    weightsPath: spec.weightsPath,
    profiles: spec.profiles.map((p) => ({
      name: p.name,
      engine: p.engine,
      gpuClass: p.gpuClass,
      ...profileShape(p),
      args: p.args ?? [],
      env: p.env ?? {},
      startupTimeoutS: p.startupTimeoutS ?? DEFAULT_STARTUP_TIMEOUT_S,
    })),
  };
}

/** A deployment with its pool defaulted. */
export function placeDeployment(row: SpecRow): PlaceDeployment {
  const spec = JSON.parse(row.spec) as DeploymentSpec;
  return {
    name: row.name,
    model: spec.model,
    replicas: spec.replicas,
    pool: spec.pool ?? "default",
    ...(spec.profiles ? { profiles: spec.profiles } : {}),
    ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
  };
}

type StateRow = { nodeId: string; shardId: string; state: string; transport?: ShardTransport | null };

/** The key a shard's reported state goes by: node and shard id. */
export const shardKey = (s: { nodeId: string; shardId: string }): string => `${s.nodeId}/${s.shardId}`;
/** Reported states by shardKey(). */
export type StatesByShard<T extends StateRow = StateRow> = ReadonlyMap<string, T>;

/** Placed replicas with their shards, from the replicas and shards tables (readiness comes from the states). */
export function placedReplicas(replicaRows: ReplicaRow[], shardRows: ShardRow[]): Replica[] {
  const byReplica = new Map<string, ShardRow[]>();
  for (const s of shardRows) {
    const mine = byReplica.get(s.replicaId);
    if (mine) mine.push(s);
    else byReplica.set(s.replicaId, [s]);
  }
  return replicaRows.map((r) => ({
    id: r.id,
    deployment: r.deployment,
    profile: r.profile,
    fingerprint: r.fingerprint,
    seq: r.seq,
    shards: (byReplica.get(r.id) ?? [])
      .sort((a, b) => a.rank - b.rank)
      .map((s) => {
        const spec = JSON.parse(s.spec) as StartShard;
        return {
          shardId: s.id,
          replicaId: r.id,
          nodeId: s.nodeId,
          rank: s.rank,
          nnodes: spec.nnodes,
          deviceIds: spec.deviceIds,
          visibleDevices: spec.visibleDevices,
          hcas: spec.hcas,
          httpPort: spec.httpPort,
          leaderAddr: spec.leaderAddr,
          leaderPort: spec.leaderPort,
          ...(spec.enginePorts ? { enginePorts: spec.enginePorts } : {}),
          fabric: spec.fabric,
          env: spec.env,
        };
      }),
  }));
}

/**
 * The replicas, each ready when it serves: every shard reported ready, on the transport it was placed for unless its
 * deployment (`policy`) prefers serving anyway.
 */
export function withReadiness(
  placed: readonly Replica[],
  stateOf: StatesByShard,
  policy: (deployment: string) => TransportPolicy = () => "require",
): Replica[] {
  return placed.map((r) => {
    const facts = r.shards.map((s) => stateOf.get(shardKey(s)) ?? { state: undefined });
    return { ...r, ready: serves(replicaState(facts), policy(r.deployment)) };
  });
}

/** Everything plan() needs, from the rows of one read. */
export function planInput(rows: {
  nodes: (NodeRow & { facts: NodeFacts })[];
  models: SpecRow[];
  deployments: SpecRow[];
  placed: readonly Replica[];
  /** The shards' reported states, by shardKey(). */
  stateOf: StatesByShard;
  nextSeq: number;
  now: number;
  lostAfterS: number;
}): PlanInput {
  const policyOf = policies(rows.deployments);
  return {
    nodes: rows.nodes.map((n) => placeNode(n, n.facts, rows.now, rows.lostAfterS)),
    models: rows.models.map(placeModel),
    deployments: rows.deployments.map(placeDeployment),
    replicas: withReadiness(rows.placed, rows.stateOf, (d) => policyOf.get(d) ?? "require"),
    nextSeq: rows.nextSeq,
  };
}
