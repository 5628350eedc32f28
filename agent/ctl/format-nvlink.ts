// `llmgw ctl nvlink`: each multi-node NVLink domain as a person reads it — trays in order, each GPU joined or why
// not, every reason a tray is out of placement — then the nodes in no domain. Pure.
import type { NvlinkDomain, NvlinkGpu, NvlinkView } from "../../shared/schemas/nvlink.js";
import { table } from "../inventory.js";
import { grid, text } from "./format.js";

/**
 * One GPU of a tray: `2 joined`, `2 joined, degraded`, `2 NOT JOINED: fabric In Progress`, `2 joined to <other key>`.
 */
export function gpuCell(g: NvlinkGpu, domain?: string): string {
  if (!g.joined) return `${g.index} NOT JOINED: ${g.notJoined ?? "no reason reported"}`;
  if (domain && g.domain !== domain) return `${g.index} joined to ${g.domain}`;
  return `${g.index} joined${g.degraded ? ", degraded" : ""}`;
}

/** The lines of one domain. */
function domainLines(d: NvlinkDomain): string[] {
  const head = `NVLink domain ${d.key}: ${d.eligibleTrays} of ${d.trays.length} tray(s) eligible${d.degraded ? "; degraded, so placed on after healthy domains" : ""}`;
  const lines = [
    head,
    ...grid(
      ["TRAY", "NODE", "STATE", "JOINED", "FABRIC HEALTH", "IMEX", "ELIGIBLE"],
      d.trays.map((t) => [
        t.trayIndex?.toString() ?? "?",
        t.node,
        t.state,
        `${t.joined}/${t.total}`,
        t.fabricHealth ?? "-",
        `${t.imex.state}, ${t.imex.channels} channel(s)`,
        t.eligible ? (t.degraded ? "yes, degraded" : "yes") : "NO",
      ]),
      "no trays",
      "  ",
    ),
  ];
  if (d.trays.length)
    lines.push(
      "  GPUs",
      ...table(
        d.trays.map((t) => [t.node, t.gpus.map((g) => gpuCell(g, d.key)).join("; ") || "none"]),
        "    ",
      ),
    );
  const out = d.trays.flatMap((t) => t.reasons.map((r) => [t.node, r]));
  if (out.length) lines.push("  Out of placement", ...table(out, "    "));
  const warn = d.trays.flatMap((t) => t.warnings.map((w) => [t.node, w]));
  if (warn.length) lines.push("  Degraded", ...table(warn, "    "));
  // what works today but is not what placement counts on: an IMEX peer list that differs, a shard off its fabric
  const notes = d.trays.flatMap((t) => [
    ...(t.imexConfig?.warning ? [[t.node, t.imexConfig.warning]] : []),
    ...t.degradedShards.map((s) => [t.node, `shard ${s.shardId} transport degraded: ${s.reason}`]),
  ]);
  if (notes.length) lines.push("  Warnings", ...table(notes, "    "));
  if (d.shards.length) {
    lines.push(
      "  Shards",
      ...table(
        [
          ["SHARD", "DEPLOYMENT", "RANK", "NODE", "FABRIC", "STATE", "TRANSPORT"],
          ...d.shards.map((s) => [
            s.shardId,
            s.deployment,
            String(s.rank),
            s.node,
            s.fabric,
            s.state,
            s.transport ? `${s.transport.verdict}${s.transport.via ? ` (${s.transport.via})` : ""}` : "-",
          ]),
        ],
        "    ",
      ),
    );
  }
  return lines;
}

/** `llmgw ctl nvlink`: domains, then standalone NVSwitch boards, then nodes with no NVLink fabric. */
export function formatNvlink(v: NvlinkView): string {
  const lines = v.domains.length
    ? v.domains.flatMap((d, i) => [...(i ? [""] : []), ...domainLines(d)])
    : ["no multi-node NVLink domain"];
  if (v.standalone.length) {
    lines.push(
      "",
      "Not in a multi-node domain",
      ...table(
        v.standalone.map((s) => [s.node, s.state, `${s.gpus.length} GPU(s)`, s.reason]),
        "  ",
      ),
    );
  }
  if (v.noFabric.length) lines.push("", `No NVLink fabric reported: ${v.noFabric.join(", ")}`);
  return text(lines);
}
