// The NVLink domain the control plane sees each node in, and the addresses of every node of a domain: what a node's
// IMEX nodes_config.cfg should list. GET /api/v1/agents/{node}/nvlink-peers answers it to `llmgw doctor`; the NVLink
// view compares each node's reported list with it. One rule for both, so the two never disagree.
import { sql } from "drizzle-orm";
import { homeDomain } from "../../shared/fabric.js";
import { canonicalAddresses, imexConfigDigest } from "../../shared/imex-config.js";
import type { Gpu } from "../../shared/schemas/gpu.js";
import type { NvlinkPeers } from "../../shared/schemas/nvlink-peers.js";
import type { Q } from "../db/client.js";
import { nodes } from "../db/schema.js";

/** One node as the peer lists need it: its address and the domain it is drawn in. */
export type PeerNode = { id: string; mgmtAddr: string; domain?: string | null };

/** What a domain's IMEX peer list should be: how many addresses, and their digest (shared/imex-config.ts). */
export type ImexDomainList = { addresses: number; digest: string };

/**
 * The domain a node is drawn in, as GET /api/v1/nvlink draws it: the one most of its cards report, else the one it
 * was last seen in (a tray whose fabric manager is restarting still counts); null when neither.
 */
export function nodeDomain(gpus: readonly Pick<Gpu, "fabric">[], lastDomain: string | null | undefined): string | null {
  let home = homes.get(gpus);
  if (home === undefined) {
    home = homeDomain(gpus) ?? null;
    homes.set(gpus, home);
  }
  return home ?? lastDomain ?? null;
}

/** The domain each cards list names, worked out once per list (a scrape asks it of every node, twice). */
const homes = new WeakMap<readonly Pick<Gpu, "fabric">[], string | null>();

/** Every domain's addresses, once each and sorted: every node drawn in it, whatever its state. */
export function domainAddresses(all: readonly PeerNode[]): Map<string, string[]> {
  const by = new Map<string, string[]>();
  for (const n of all) {
    if (!n.domain) continue;
    const list = by.get(n.domain);
    if (list) list.push(n.mgmtAddr);
    else by.set(n.domain, [n.mgmtAddr]);
  }
  return new Map([...by].map(([domain, addresses]) => [domain, canonicalAddresses(addresses)]));
}

/** The caller's domain and the sorted addresses of every node in it (pure). */
export function nvlinkPeers(all: readonly PeerNode[], self: string): NvlinkPeers {
  const domain = all.find((n) => n.id === self)?.domain ?? null;
  if (!domain) return { domain: null, addresses: [] };
  return { domain, addresses: domainAddresses(all.filter((n) => n.domain === domain)).get(domain) ?? [] };
}

/** Each domain's expected IMEX peer list, its digest computed once per domain. */
export async function imexDomainLists(all: readonly PeerNode[]): Promise<Map<string, ImexDomainList>> {
  const lists = await Promise.all(
    [...domainAddresses(all)].map(
      async ([domain, addresses]) =>
        [domain, { addresses: addresses.length, digest: await imexConfigDigest(addresses) }] as const,
    ),
  );
  return new Map(lists);
}

/** Every node's address and domain; only the cards of each stored inventory are read, not the whole of it. */
export async function readPeerNodes(q: Q): Promise<PeerNode[]> {
  const rows = await q
    .select({
      id: nodes.id,
      mgmtAddr: nodes.mgmtAddr,
      lastDomain: nodes.lastDomain,
      gpus: sql<string | null>`json_extract(${nodes.inventory}, '$.gpus')`,
    })
    .from(nodes);
  return rows.map((r) => ({
    id: r.id,
    mgmtAddr: r.mgmtAddr,
    domain: nodeDomain(r.gpus ? (JSON.parse(r.gpus) as Pick<Gpu, "fabric">[]) : [], r.lastDomain),
  }));
}
