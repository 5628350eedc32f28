// What is taken on each node while one plan is being made: devices held and ports bound by shards.
import type { Replica, Shard } from "./types.js";

/**
 * `version` counts the shards added, so that what was worked out from an unchanged node can be reused; `shards` are
 * the shards themselves, in the order they were added.
 */
export type NodeUse = { devices: Set<number>; ports: Set<number>; version: number; shards: Shard[] };

/** Taken devices and ports by node id. Local to one plan() call, which adds each replica it assigns. */
export type Ledger = Map<string, NodeUse>;

/** The ledger of the replicas that exist: every shard's devices and ports count as taken. */
export function ledgerOf(replicas: readonly Replica[]): Ledger {
  const ledger: Ledger = new Map();
  for (const r of replicas) hold(ledger, r);
  return ledger;
}

/** Marks a replica's devices and ports as taken on the nodes its shards run on. */
export function hold(ledger: Ledger, replica: Replica): void {
  for (const s of replica.shards) holdShard(ledger, s);
}

/** The nodes each ledger changed on, in order (with repeats): what was worked out before can be brought up to date. */
const changes = new WeakMap<Ledger, string[]>();

/** The nodes whose use changed since the ledger's `from`th change, and the position to ask from next time. */
export function changedSince(ledger: Ledger, from: number): { nodeIds: string[]; next: number } {
  const all = changes.get(ledger) ?? [];
  return { nodeIds: all.slice(from), next: all.length };
}

function holdShard(ledger: Ledger, s: Shard): void {
  const log = changes.get(ledger);
  if (log) log.push(s.nodeId);
  else changes.set(ledger, [s.nodeId]);
  const use = useOf(ledger, s.nodeId);
  for (const d of s.deviceIds) use.devices.add(d);
  // A follower's leaderPort belongs to rank 0's node; counting it here too only ever wastes a port, never doubles one.
  use.ports.add(s.httpPort);
  use.ports.add(s.leaderPort);
  for (const p of s.enginePorts ?? []) use.ports.add(p);
  use.shards.push(s);
  use.version++;
}

function useOf(ledger: Ledger, nodeId: string): NodeUse {
  let use = ledger.get(nodeId);
  if (!use) {
    use = { devices: new Set(), ports: new Set(), version: 0, shards: [] };
    ledger.set(nodeId, use);
  }
  return use;
}

/** True when a device of the node is held by some shard. */
export function isHeld(ledger: Ledger, nodeId: string, deviceId: number): boolean {
  return ledger.get(nodeId)?.devices.has(deviceId) ?? false;
}

/** How many shards were added on the node: changes whenever its free devices or ports may have. */
export function versionOf(ledger: Ledger, nodeId: string): number {
  return ledger.get(nodeId)?.version ?? 0;
}

const NONE: readonly Shard[] = [];

/** The shards holding devices and ports on the node (the ledger's own list: read it, never keep it). */
export function shardsOn(ledger: Ledger, nodeId: string): readonly Shard[] {
  return ledger.get(nodeId)?.shards ?? NONE;
}

/** What is held on the node, as one string: equal strings, equal free devices and ports. */
export function heldOn(ledger: Ledger, nodeId: string): string {
  const use = ledger.get(nodeId);
  if (!use) return "";
  return `${[...use.devices].sort((a, b) => a - b).join(",")}/${[...use.ports].sort((a, b) => a - b).join(",")}`;
}
