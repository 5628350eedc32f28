// Which replicas serve: every shard ready, and — for a multi-node replica — each shard's NCCL on the transport it
// was placed for, unless its deployment says `transport: prefer`. One rule for the router's table, the views and
// placement's own sense of "ready". Pure.
import type { DeploymentSpec } from "../../shared/schemas/deployment.js";
import { type ShardTransport, transportReason } from "../../shared/schemas/transport.js";

export type TransportPolicy = NonNullable<DeploymentSpec["transport"]>;
export type ReplicaState = "ready" | "degraded" | "starting" | "failed";
export type ShardFacts = { state: string | null | undefined; transport?: ShardTransport | null };

/** A deployment's policy (`require` unless it says `prefer`). */
export const policyOf = (spec: { transport?: TransportPolicy } | undefined): TransportPolicy =>
  spec?.transport ?? "require";

/** The policy of each deployment, from its stored spec (JSON text). */
export function policies(rows: readonly { name: string; spec: string }[]): Map<string, TransportPolicy> {
  return new Map(rows.map((d) => [d.name, policyOf(JSON.parse(d.spec) as DeploymentSpec)]));
}

/**
 * Failed when a shard is; starting until every shard is ready with its transport judged (NCCL has said, or its
 * engine served without saying); degraded when one's transport is not the one placed for; else ready.
 */
export function replicaState(shards: readonly ShardFacts[]): ReplicaState {
  if (shards.some((s) => s.state === "failed")) return "failed";
  if (!shards.length || !shards.every((s) => s.state === "ready" && s.transport?.verdict !== "pending"))
    return "starting";
  return shards.some((s) => s.transport?.verdict === "degraded") ? "degraded" : "ready";
}

/** True when the router may send it requests. */
export const serves = (state: ReplicaState, policy: TransportPolicy): boolean =>
  state === "ready" || (state === "degraded" && policy === "prefer");

/** The first degraded shard's reason, for a replica's one-line why. */
export function degradedReason(shards: readonly ShardFacts[]): string | undefined {
  const t = shards.find((s) => s.transport?.verdict === "degraded")?.transport;
  return t ? transportReason(t) : undefined;
}
