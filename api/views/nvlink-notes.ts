// What the NVLink view says of a tray besides its eligibility: its IMEX peer list against the nodes of its domain, and
// the shards on it whose NCCL left the transport they were placed for. Warnings only: neither keeps a tray out of
// placement. Pure.
import type { NvlinkDegradedShard, NvlinkImexConfig, NvlinkShard } from "../../shared/schemas/nvlink.js";
import { transportReason } from "../../shared/schemas/transport.js";
import type { ImexDomainList } from "./nvlink-peers.js";

/** What a node's heartbeat said of its IMEX peer list: the digest of its sorted addresses and how many. */
export type ImexConfigSent = { digest: string; addresses: number };

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** A tray's IMEX peer list against its domain's nodes: matches or, in words, how it differs; null when none was sent. */
export function imexConfigOf(
  sent: ImexConfigSent | null | undefined,
  domain: ImexDomainList | undefined,
): NvlinkImexConfig | null {
  if (!sent) return null;
  const want = domain ?? { addresses: 0, digest: "" };
  const matches = sent.digest === want.digest;
  const lists = `IMEX nodes_config.cfg lists ${plural(sent.addresses, "address", "addresses")}`;
  const nodes = plural(want.addresses, "node", "nodes");
  const warning = matches
    ? null
    : sent.addresses === want.addresses
      ? `${lists}, not those of the ${nodes} of this domain`
      : `${lists}, not the ${nodes} of this domain`;
  return { addresses: sent.addresses, matches, warning };
}

/** The shards on `node` whose transport is degraded, in the order given. */
export function degradedShardsOn(node: string, shards: readonly NvlinkShard[]): NvlinkDegradedShard[] {
  return shards.flatMap((s) =>
    s.node === node && s.transport?.verdict === "degraded"
      ? [{ shardId: s.shardId, replicaId: s.replicaId, reason: transportReason(s.transport) }]
      : [],
  );
}
