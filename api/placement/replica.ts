// Building a new replica and its shards from the nodes and devices chosen for it (docs/architecture.md, placement).

import { isMigClass } from "../../shared/classes.js";
import type { DeviceSet } from "./devices.js";
import type { NodeFit } from "./fit.js";
import type { PlaceDevice, Replica, Shard } from "./types.js";

/** One node of a gang as chosen: its fit, the HCAs its shard uses and the env placement adds. */
export type ShardChoice = { fit: NodeFit & { set: DeviceSet }; hcas: string[]; env: Record<string, string> };

export type NewReplica = { seq: number; deployment: string; profile: string; fingerprint: string; fabric: string };

/** CUDA_VISIBLE_DEVICES for a device set: "MIG-<uuid>" for a MIG instance, else card indices ascending. */
export function visibleDevices(devices: readonly PlaceDevice[]): string {
  const only = devices.length === 1 ? devices[0] : undefined;
  const mig = only && (only.migIndex !== undefined || isMigClass(only.class)) ? only : undefined;
  if (mig) return mig.uuid.startsWith("MIG-") ? mig.uuid : `MIG-${mig.uuid}`;
  return [...new Set(devices.map((d) => d.card))].sort((a, b) => a - b).join(",");
}

/**
 * A replica `r<seq>` whose shard of rank i runs on gang[i]; rank 0 leads, on the ports its fit found (http, leader and
 * the engine's own).
 */
export function buildReplica(r: NewReplica, gang: readonly ShardChoice[]): Replica {
  const id = `r${r.seq}`;
  const leader = gang[0]!.fit;
  const [, leaderPort, ...enginePorts] = leader.ports as [number, number, ...number[]];
  const shards: Shard[] = gang.map((c, rank) => ({
    shardId: `${id}-s${rank}`,
    replicaId: id,
    nodeId: c.fit.node.id,
    rank,
    nnodes: gang.length,
    deviceIds: c.fit.set.devices.map((d) => d.id).sort((a, b) => a - b),
    visibleDevices: visibleDevices(c.fit.set.devices),
    hcas: c.hcas,
    httpPort: c.fit.ports[0]!,
    leaderAddr: leader.node.mgmtAddr,
    leaderPort,
    ...(rank === 0 && enginePorts.length ? { enginePorts } : {}),
    fabric: r.fabric,
    env: c.env,
  }));
  return { id, deployment: r.deployment, profile: r.profile, fingerprint: r.fingerprint, seq: r.seq, shards };
}
