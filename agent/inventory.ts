// `llmgw agent inventory`: the inventory as a person reads it, with plain-language warnings. Pure formatting.
import { devicesOf } from "../shared/classes.js";
import { nodeFabric, notJoinedReason } from "../shared/fabric.js";
import type { Inventory } from "../shared/schemas/inventory.js";

/** Lays rows out in columns separated by two spaces. */
export function table(rows: string[][], indent = "  "): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map(
    (r) =>
      indent +
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
  );
}

/** "1-3, 5" for [1, 2, 3, 5]. */
export function ranges(ns: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < ns.length; i++) {
    let j = i;
    while (j + 1 < ns.length && ns[j + 1] === ns[j]! + 1) j++;
    out.push(j > i ? `${ns[i]}-${ns[j]}` : String(ns[i]));
    i = j;
  }
  return out.join(", ");
}

/** Everything a person should act on before this node takes work. */
export function inventoryWarnings(inv: Inventory): string[] {
  const w: string[] = [];
  for (const e of inv.errors) w.push(`could not read ${e.source}: ${e.message}`);
  for (const g of inv.gpus) for (const p of g.health.problems) w.push(`GPU ${g.index}: ${p}`);
  for (const [e, why] of Object.entries(inv.engines.warnings ?? {})) w.push(`engine ${e}: ${why}`);
  const f = nodeFabric(inv.gpus);
  if (f.domains.length > 1)
    w.push(`GPUs report different NVLink domains (${f.domains.join(", ")}): this node is in no single domain`);
  if (f.domains.length && f.joined < f.total) {
    const out = inv.gpus
      .filter((g) => notJoinedReason(g.fabric))
      .map((g) => `GPU ${g.index} ${notJoinedReason(g.fabric)}`);
    w.push(`${f.total - f.joined} of ${f.total} GPUs are not joined to the NVLink domain: ${out.join("; ")}`);
  }
  if (f.degraded.length)
    w.push(`GPU ${ranges(f.degraded)}: NVLink bandwidth degraded (health ${f.health ?? "not reported"})`);
  if (f.domains.length && inv.imex.state !== "ready")
    w.push(`IMEX is ${inv.imex.state}: GPUs cannot share memory across nodes of the domain`);
  if (f.domains.length && inv.imex.state === "ready" && inv.imex.channels === 0)
    w.push("IMEX has no channel (/dev/nvidia-caps-imex-channels is empty): create channel0");
  for (const h of inv.hcas) {
    for (const p of h.ports)
      if (p.state === "INIT") w.push(`${h.name} port ${p.port} is INIT: no subnet manager answers on its fabric`);
  }
  if (!inv.hcas.length)
    w.push("no InfiniBand adapter: this node cannot host multi-node replicas outside an NVLink domain");
  return w;
}

function gpuRows(inv: Inventory): string[][] {
  const rows = [["GPU", "CLASS", "NAME", "MEMORY", "CC", "NUMA", "NIC", "FABRIC", "HEALTH"]];
  const devices = devicesOf(inv.gpus);
  for (const g of inv.gpus) {
    const health = g.health.problems.length ? `${g.health.problems.length} problem(s)` : "ok";
    const fabric = g.fabric ? (notJoinedReason(g.fabric) ?? "joined") : "not reported";
    const mig = g.mig?.current.toLowerCase() === "enabled" ? ` [MIG, ${g.mig.instances.length} instances]` : "";
    rows.push([
      String(g.index),
      g.class,
      g.name + mig,
      `${g.memoryTotalMiB} MiB`,
      g.computeCapability ?? "-",
      g.numaNode?.toString() ?? "-",
      g.nearestNic ?? "-",
      fabric,
      health,
    ]);
    for (const d of devices.filter((d) => d.card === g.index && d.migIndex !== undefined)) {
      rows.push([d.label, d.class, "  MIG instance", `${d.memoryTotalMiB} MiB`, "", "", "", "", ""]);
    }
  }
  return rows;
}

/** The readable report of `llmgw agent inventory`. */
export function formatInventory(inv: Inventory): string {
  const lines: string[] = [];
  const host = inv.host;
  lines.push(
    `Host: ${[host.osId, host.osVersion].filter(Boolean).join(" ") || "unknown OS"} ${host.arch}, ${host.cpuCount ?? "?"} CPUs, ${Math.round(inv.memory.totalMiB / 1024)} GiB memory, driver ${host.nvidiaDriver ?? "not found"}`,
  );
  lines.push("", `GPUs (${inv.gpus.length}, via ${inv.gpuSource})`);
  if (inv.gpus.length) lines.push(...table(gpuRows(inv)));
  else lines.push("  none");
  const classes = new Map<string, number>();
  for (const d of devicesOf(inv.gpus)) classes.set(d.class, (classes.get(d.class) ?? 0) + 1);
  lines.push(`  placeable devices by class: ${[...classes].map(([c, n]) => `${c} × ${n}`).join(", ") || "none"}`);
  for (const g of inv.gpus.filter((g) => g.nvlinkPeers.length)) {
    const byLinks = new Map<number, number[]>();
    for (const p of g.nvlinkPeers) byLinks.set(p.links, [...(byLinks.get(p.links) ?? []), p.gpu]);
    lines.push(
      `  NVLink GPU ${g.index} ↔ ${[...byLinks].map(([links, gpus]) => `${ranges(gpus)} (NV${links})`).join(", ")}`,
    );
  }
  const f = nodeFabric(inv.gpus);
  lines.push("", "NVLink fabric");
  if (f.domains.length === 1)
    lines.push(`  domain ${f.domains[0]}: ${f.joined} of ${f.total} GPUs joined, health ${f.health ?? "not reported"}`);
  else if (f.domains.length) lines.push(`  mixed domains: ${f.domains.join(", ")}`);
  else lines.push("  no multi-node NVLink domain (no fabric, or a single machine's NVSwitch)");
  const imex = inv.imex;
  lines.push(
    `  IMEX: ${imex.state}${imex.domainState ? `, domain ${imex.domainState}` : ""}, ${imex.channels} channel${imex.channels === 1 ? "" : "s"}`,
  );
  lines.push("", `InfiniBand adapters (${inv.hcas.length})`);
  const ports = inv.hcas.flatMap((h) =>
    h.ports.map((p) => [
      h.name,
      String(p.port),
      p.state,
      p.rateGbps === undefined ? "-" : `${p.rateGbps} Gb/s`,
      p.linkLayer ?? "-",
      p.gidPrefix ?? "-",
      h.numaNode?.toString() ?? "-",
    ]),
  );
  if (ports.length) lines.push(...table([["HCA", "PORT", "STATE", "RATE", "LINK", "GID PREFIX", "NUMA"], ...ports]));
  else lines.push("  none");
  for (const a of inv.fabrics)
    lines.push(
      `  fabric ${a.fabric}: ${a.hcas.join(", ") || "no HCA present"}${a.rateGbps ? `, ${a.rateGbps} Gb/s` : ""}`,
    );
  if (inv.hcas.length)
    lines.push(
      "  Fabric identity comes from agent.yaml `fabrics`, not the GID prefix: OpenSM's default fe80:: is the same on every fabric.",
    );
  const engines = inv.engines.probed.map(
    (e) => `${e} ${inv.engines.versions[e] ?? (inv.engines.warnings?.[e] ? "unknown (probe timed out)" : "absent")}`,
  );
  lines.push("", `Engines: ${engines.join(", ") || "none probed"}`);
  const warnings = inventoryWarnings(inv);
  if (warnings.length) lines.push("", "Warnings", ...warnings.map((w) => `  ! ${w}`));
  return `${lines.join("\n")}\n`;
}
