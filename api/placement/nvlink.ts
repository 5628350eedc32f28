// Multi-node replicas over NVLink (docs/architecture.md, placement rule 3): N trays of one domain, each eligible, each
// with the devices free.

import { byText } from "../../shared/sort.js";
import { compareScores, type NodeFit, pickGang } from "./fit.js";
import { byTray } from "./notes.js";

export type DomainChoice = { domain: string; gang: NonNullable<ReturnType<typeof pickGang>> };

/**
 * The domain for a gang of `n` shards of `k` devices: non-degraded first, then the fewest free devices left over in
 * the domain, then the key. Within a domain, trays by index (non-degraded trays first), rank 0 the first.
 */
export function chooseDomain(all: readonly NodeFit[], n: number, k: number): DomainChoice | undefined {
  const byDomain = new Map<string, NodeFit[]>();
  for (const f of all) {
    const { domain, eligible } = f.node.nvlink;
    if (!domain || !eligible) continue;
    const members = byDomain.get(domain);
    if (members) members.push(f);
    else byDomain.set(domain, [f]);
  }
  const options: { choice: DomainChoice; score: number[] }[] = [];
  for (const [domain, members] of [...byDomain.entries()].sort(byText(([domain]) => domain))) {
    const ordered = [...members].sort(
      (a, b) => Number(a.node.nvlink.degraded) - Number(b.node.nvlink.degraded) || byTray(a.node, b.node),
    );
    const gang = pickGang(ordered, n);
    if (!gang) continue;
    const leftover = members.reduce((s, f) => s + f.free, 0) - n * k;
    const degraded = gang.some((f) => f.node.nvlink.degraded);
    options.push({ choice: { domain, gang }, score: [degraded ? 1 : 0, leftover] });
  }
  return options.sort((a, b) => compareScores(a.score, b.score))[0]?.choice;
}

/** Env every shard of an NVLink replica gets. */
export const NVLINK_ENV: Readonly<Record<string, string>> = { NCCL_MNNVL_ENABLE: "1", NCCL_CUMEM_ENABLE: "1" };
