// Adopting engines the control plane has no row for (docs/architecture.md, placement rule 7): a node reports each
// engine it runs with the StartShard it was started from. After a restore from an older backup, or when a node was
// deleted and registered again, such a shard is taken back as a replica — same ids, devices and ports, so the
// engine keeps its process — when a deployment is short of it and nothing else holds what it uses. Pure.
import type { StartShard } from "../../shared/schemas/assignment.js";
import { byText } from "../../shared/sort.js";
import { allowedProfiles } from "./existing.js";
import { profileFingerprint } from "./fingerprint.js";
import { hold, isHeld, type Ledger, ledgerOf } from "./ledger.js";
import { visibleDevices } from "./replica.js";
import type { PlanInput, Replica } from "./types.js";

/** A running shard a node reported that has no row: its node, last reported state and spec. */
export type Orphan = { nodeId: string; state: string; spec: StartShard };
export type Adoption = {
  adopted: Replica[];
  refused: { nodeId: string; shardId: string; why: string }[];
  /** Past every reported replica's seq, so that new ids never collide with a running engine's. */
  nextSeq: number;
};

/** States of an engine that is still meant to serve: a draining, stopped or failed one is left to stop. */
export const LIVE_STATES: ReadonlySet<string> = new Set(["pending", "starting", "loading", "ready"]);

/**
 * Which orphans become replicas again, in node/shard order: a single-node shard whose profile is still allowed with
 * the same fingerprint, of a deployment short of replicas, on devices and ports nothing else holds. Every other is
 * refused with the reason (its engine is stopped after the agent's adopt grace, as before).
 */
export function adoptOrphans(input: PlanInput, orphans: readonly Orphan[]): Adoption {
  const ledger: Ledger = ledgerOf(input.replicas);
  const count = new Map<string, number>();
  for (const r of input.replicas) count.set(r.deployment, (count.get(r.deployment) ?? 0) + 1);
  const ids = new Set(input.replicas.flatMap((r) => [r.id, ...r.shards.map((s) => s.shardId)]));
  const out: Adoption = { adopted: [], refused: [], nextSeq: input.nextSeq };
  const sorted = [...orphans].sort(byText((o) => `${o.nodeId}/${o.spec.shardId}`));
  for (const o of sorted) {
    // new ids pass every reported one, adopted or not: a refused engine runs on until its agent stops it, and a new
    // shard of the same id would be taken for it
    const seq = /^r(\d+)$/.exec(o.spec.replicaId)?.[1];
    if (seq !== undefined) out.nextSeq = Math.max(out.nextSeq, Number(seq) + 1);
    const why = adoptable(input, o, seq, ledger, count, ids);
    if (typeof why === "string") {
      out.refused.push({ nodeId: o.nodeId, shardId: o.spec.shardId, why });
      continue;
    }
    out.adopted.push(why);
    hold(ledger, why);
    count.set(why.deployment, (count.get(why.deployment) ?? 0) + 1);
    ids.add(why.id).add(o.spec.shardId);
  }
  return out;
}

/** The replica an orphan becomes, or why it cannot. */
function adoptable(
  input: PlanInput,
  o: Orphan,
  /** The seq in its replica id (`r<seq>`), when it has that form. */
  seq: string | undefined,
  ledger: Ledger,
  count: Map<string, number>,
  ids: Set<string>,
): Replica | string {
  const s = o.spec;
  if (!LIVE_STATES.has(o.state)) return `its engine is ${o.state}`;
  if (s.nnodes !== 1 || s.profile.nodes !== 1)
    return "a multi-node shard is never adopted: its peers' engines cannot be vouched for one node at a time";
  if (seq === undefined || s.shardId !== `${s.replicaId}-s0`) return `"${s.shardId}" is not a shard id placement gives`;
  if (ids.has(s.replicaId) || ids.has(s.shardId)) return `the id ${s.replicaId} is taken by another replica`;
  const d = input.deployments.find((x) => x.name === s.deployment);
  if (!d) return `no deployment ${s.deployment}`;
  const model = input.models.find((m) => m.name === d.model);
  const profile = allowedProfiles(d, model).find((p) => p.name === s.profile.name);
  if (!model || !profile) return `deployment ${d.name} no longer allows profile ${s.profile.name}`;
  const fingerprint = profileFingerprint(model, profile);
  if (fingerprint !== s.fingerprint) return `profile ${profile.name} changed since the engine started`;
  if ((count.get(d.name) ?? 0) >= d.replicas) return `deployment ${d.name} has all its replicas`;
  const node = input.nodes.find((n) => n.id === o.nodeId);
  if (!node || node.notSchedulable === "lost") return `node ${o.nodeId} is not reachable`;
  if (node.pool !== d.pool || !Object.entries(d.nodeSelector ?? {}).every(([k, v]) => node.labels[k] === v))
    return `node ${node.id} is not in deployment ${d.name}'s pool and selector`;
  const devices = s.deviceIds.map((id) => node.devices.find((x) => x.id === id));
  if (devices.length !== profile.gpusPerNode || devices.some((x) => !x || x.class !== profile.gpuClass))
    return `its devices (${s.deviceIds.join(", ")}) are not ${profile.gpusPerNode} ${profile.gpuClass} on ${node.id}`;
  const held = s.deviceIds.filter((id) => isHeld(ledger, node.id, id));
  if (held.length) return `device${held.length === 1 ? "" : "s"} ${held.join(", ")} now held by another replica`;
  const ports = [...new Set([s.httpPort, s.leaderPort, ...(s.enginePorts ?? [])])];
  const use = ledger.get(node.id)?.ports;
  if (ports.some((p) => use?.has(p))) return `port ${ports.find((p) => use?.has(p))} now held by another replica`;
  return {
    id: s.replicaId,
    deployment: d.name,
    profile: profile.name,
    fingerprint,
    seq: Number(seq),
    ready: o.state === "ready",
    shards: [
      {
        shardId: s.shardId,
        replicaId: s.replicaId,
        nodeId: node.id,
        rank: 0,
        nnodes: 1,
        deviceIds: [...s.deviceIds].sort((a, b) => a - b),
        visibleDevices: visibleDevices(devices.filter((x) => x !== undefined)),
        hcas: s.hcas,
        httpPort: s.httpPort,
        leaderAddr: node.mgmtAddr,
        leaderPort: s.leaderPort,
        ...(s.enginePorts ? { enginePorts: s.enginePorts } : {}),
        fabric: s.fabric,
        env: s.env,
      },
    ],
  };
}
