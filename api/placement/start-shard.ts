// The agent's view of a placed shard: what placement writes into each shard row, and what the agent is sent.
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { PlanInput, Replica } from "./types.js";

/** The agent's view of a placed shard: the plan's shard with its model, profile and deployment filled in. */
export function startShard(
  input: PlanInput,
  r: Replica,
  s: Replica["shards"][number],
  mgmtInterface?: string,
): StartShard {
  const d = input.deployments.find((x) => x.name === r.deployment)!;
  const m = input.models.find((x) => x.name === d.model)!;
  const p = m.profiles.find((x) => x.name === r.profile)!;
  return {
    shardId: s.shardId,
    replicaId: r.id,
    deployment: d.name,
    model: m.servedName,
    weightsPath: m.weightsPath,
    rank: s.rank,
    nnodes: s.nnodes,
    leaderAddr: s.leaderAddr,
    leaderPort: s.leaderPort,
    httpPort: s.httpPort,
    ...(s.enginePorts ? { enginePorts: s.enginePorts } : {}),
    deviceIds: s.deviceIds,
    visibleDevices: s.visibleDevices,
    hcas: s.hcas,
    ...(mgmtInterface ? { mgmtInterface } : {}),
    profile: {
      name: p.name,
      engine: p.engine as StartShard["profile"]["engine"],
      tp: p.tp,
      pp: p.pp,
      gpusPerNode: p.gpusPerNode,
      nodes: p.nodes,
      args: p.args,
      env: p.env,
      startupTimeoutS: p.startupTimeoutS,
    },
    env: s.env,
    pool: d.pool,
    fabric: s.fabric,
    fingerprint: r.fingerprint,
  };
}
