// StartShard objects and probe results for the engine adapter tests: a single-node TP-4 vLLM shard unless told
// otherwise.

import type { EngineOptions, ProbeResult } from "../../../agent/engines/types.js";
import type { StartShard } from "../../../shared/schemas/assignment.js";

type Over = Partial<Omit<StartShard, "profile">> & { profile?: Partial<StartShard["profile"]> };

export const HOST: EngineOptions = { host: "0.0.0.0" };

/** A valid StartShard with `over` applied (profile fields merged into the default profile). */
export function makeShard(over: Over = {}): StartShard {
  const { profile, ...rest } = over;
  return {
    shardId: "r12-s0",
    replicaId: "r12",
    deployment: "llama-70b",
    model: "meta-llama/Llama-3.1-70B-Instruct",
    weightsPath: "/models/llama-3.1-70b",
    rank: 0,
    nnodes: 1,
    leaderAddr: "10.0.0.11",
    leaderPort: 29500,
    httpPort: 20001,
    deviceIds: [0, 1, 2, 3],
    visibleDevices: "0,1,2,3",
    hcas: [],
    pool: "default",
    fabric: "single",
    fingerprint: "fp-1",
    env: {},
    profile: {
      name: "tp4",
      engine: "vllm",
      tp: 4,
      pp: 1,
      gpusPerNode: 4,
      nodes: 1,
      args: [],
      env: {},
      startupTimeoutS: 1800,
      ...profile,
    },
    ...rest,
  };
}

/** Rank `rank` of a two-node TP-4 × PP-2 replica over InfiniBand. */
export function twoNodeShard(rank: number, over: Over = {}): StartShard {
  return makeShard({
    shardId: `r12-s${rank}`,
    rank,
    nnodes: 2,
    fabric: "ib:fabric-a",
    hcas: ["mlx5_0", "mlx5_1"],
    ...over,
    profile: { name: "tp4-pp2", tp: 4, pp: 2, gpusPerNode: 4, nodes: 2, ...over.profile },
  });
}

/** One probe result of each kind an engine's /health can give. */
export const PROBE = {
  refused: { kind: "refused" },
  timeout: { kind: "error", message: "The operation was aborted due to timeout" },
  ok: { kind: "status", status: 200, body: "" },
  loadingModel: {
    kind: "status",
    status: 503,
    body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}',
  },
  unavailable: { kind: "status", status: 503, body: "" },
  internal: { kind: "status", status: 500, body: "Internal Server Error" },
  notFound: { kind: "status", status: 404, body: "Not Found" },
} satisfies Record<string, ProbeResult>;
