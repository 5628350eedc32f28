// The reasons a replica stays pending, in words a person can act on (docs/architecture.md, placement rule 5): one
// function per kind of shortfall.

import { isMigClass } from "../../shared/classes.js";
import { ENGINE_CAPABILITIES, type EngineName, multiNodeRefusal } from "../../shared/engines.js";
import { byText, compareText } from "../../shared/sort.js";
import type { NodeFit } from "./fit.js";
import { byTray, classNotes, heldNote, joinNotes, shortDomain, trayName } from "./notes.js";
import { migTooOld, type Scope, vulkanOnMig } from "./scope.js";
import type { PlaceDeployment, PlaceModel, PlaceNode, PlaceProfile } from "./types.js";

/**
 * Why a profile can never be placed as declared (a MIG class with more than one device, no devices); else undefined.
 */
export function profileReason(p: PlaceProfile): string | undefined {
  if (p.engine in ENGINE_CAPABILITIES) {
    const spans = multiNodeRefusal(p.engine as EngineName, p.nodes);
    if (spans) return `profile ${p.name}: ${spans}`;
  }
  const counts = { tp: p.tp, pp: p.pp, gpusPerNode: p.gpusPerNode, nodes: p.nodes };
  if (isMigClass(p.gpuClass)) {
    const off = Object.entries(counts).filter(([, v]) => v !== 1);
    if (off.length) {
      const has = off.map(([k, v]) => `${k} ${v}`).join(", ");
      const why = "a process opens one MIG device; instances have no NVLink";
      return `profile ${p.name} runs on MIG class ${p.gpuClass} but has ${has}: a MIG profile needs tp = pp = gpusPerNode = nodes = 1 (${why})`;
    }
  }
  const bad = Object.entries(counts).filter(([, v]) => !Number.isInteger(v) || v < 1);
  if (bad.length)
    return `profile ${p.name} has ${bad.map(([k, v]) => `${k} ${v}`).join(", ")}: each must be a whole number of at least 1`;
  return undefined;
}

/** Why no model or profile is there to place; undefined when there is. */
export function catalogReason(
  d: PlaceDeployment,
  model: PlaceModel | undefined,
  allowed: readonly PlaceProfile[],
): string | undefined {
  if (!model) return `model ${d.model} does not exist`;
  if (allowed.length) return undefined;
  if (!model.profiles.length) return `model ${model.name} has no profiles`;
  if (!d.profiles?.length) return `deployment ${d.name} allows no profile`;
  const has = model.profiles.map((p) => p.name).join(", ");
  return `none of the allowed profiles (${d.profiles.join(", ")}) is a profile of model ${model.name} (it has ${has})`;
}

/** Why the deployment's pool, selector or the profile's engine or class leave no node at all; else undefined. */
export function scopeReason(scope: Scope, d: PlaceDeployment, p: PlaceProfile): string | undefined {
  const where = `in pool ${d.pool}`;
  const selector = Object.entries(d.nodeSelector ?? {})
    .sort(byText(([k]) => k))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  if (!scope.inPool.length) return `no node ${where}`;
  if (!scope.matching.length) return `no node ${where} matches nodeSelector ${selector}`;
  const matching = selector ? ` matching nodeSelector ${selector}` : "";
  if (!scope.withEngine.length) {
    const vulkan = scope.matching.filter((n) => vulkanOnMig(n, p)).map((n) => n.id);
    if (vulkan.length)
      return `no node ${where}${matching} can run ${p.engine} on MIG class ${p.gpuClass}: its build on ${vulkan.join(", ")} is Vulkan's, which cannot address MIG instances (use the CUDA build there, or whole GPUs)`;
    const old = scope.matching.map((n) => [n.id, migTooOld(n, p)] as const).filter(([, why]) => why);
    if (old.length)
      return `no node ${where}${matching} can run ${p.engine} on MIG class ${p.gpuClass}: ${old.map(([id, why]) => `on ${id} ${why}`).join("; ")} (upgrade it, or use whole GPUs)`;
    return `no node ${where}${matching} has engine ${p.engine}`;
  }
  if (isMigClass(p.gpuClass) || scope.withEngine.some((n) => n.devices.some((d) => d.class === p.gpuClass)))
    return undefined;
  const classes = [...new Set(scope.withEngine.flatMap((n) => n.devices.map((d) => d.class)))].sort();
  return `no node ${where}${matching} with engine ${p.engine} has ${p.gpuClass}${classes.length ? ` (classes there: ${classes.join(", ")})` : ""}`;
}

/** Why one node cannot give `k` devices of the class: the best node's free count, what keeps the others out. */
export function singleReason(cls: string, k: number, scope: Scope, fits: readonly NodeFit[]): string {
  const best = [...fits].sort((a, b) => b.free - a.free || compareText(a.node.id, b.node.id))[0];
  const byId = new Map(fits.map((f) => [f.node.id, f]));
  const notes = classNotes(scope.withEngine, cls, byId);
  const free = fits.reduce((s, f) => s + f.free, 0);
  const held = heldNote(scope.withEngine, cls, free);
  const all = held ? [held, ...notes] : notes;
  const why = all.length ? ` (${joinNotes(all)})` : "";
  if (isMigClass(cls)) {
    const none = scope.withEngine.some((n) => n.devices.some((d) => d.class === cls)) ? "" : " (no node has one)";
    return `MIG class ${cls}: no instance free${why || none}`;
  }
  const has = best && best.free > 0 ? `best node ${best.node.id} has ${best.free} free` : "none free";
  return `needs ${k} free ${cls} on one node; ${has}${why}`;
}

/** Why no NVLink domain and no InfiniBand fabric has `n` nodes with `k` devices of the class free. */
export function multiReason(cls: string, k: number, n: number, scope: Scope, fits: readonly NodeFit[]): string {
  const need = `${n} nodes with ${k} free ${cls}`;
  const withClass = scope.withEngine.filter((node) => node.devices.some((d) => d.class === cls));
  const pool = scope.inPool[0]?.pool ?? "?";
  return `needs ${need} in one NVLink domain; ${nvlinkPart(k, cls, pool, withClass, fits)}; ${ibPart(need, withClass, fits)}`;
}

function nvlinkPart(
  k: number,
  cls: string,
  pool: string,
  nodes: readonly PlaceNode[],
  fits: readonly NodeFit[],
): string {
  const byId = new Map(fits.map((f) => [f.node.id, f]));
  const domains = new Map<string, PlaceNode[]>();
  for (const node of nodes) {
    if (node.nvlink.domain) domains.set(node.nvlink.domain, [...(domains.get(node.nvlink.domain) ?? []), node]);
  }
  if (!domains.size) return `no node in pool ${pool} with ${cls} is in an NVLink domain`;
  const parts = [...domains.entries()].map(([key, members]) => {
    const notes: string[] = [];
    let eligible = 0;
    let short = 0;
    for (const node of [...members].sort(byTray)) {
      const f = byId.get(node.id);
      const name = trayName(node);
      if (!node.schedulable) notes.push(`${name} ${node.notSchedulable ?? "not schedulable"}`);
      else if (!node.nvlink.eligible)
        notes.push(...(node.nvlink.reasons.length ? node.nvlink.reasons : ["not eligible"]).map((r) => `${name} ${r}`));
      else if (!f?.set) short++;
      else if (!f.ports.length) notes.push(`${name} has no free port`);
      else eligible++;
    }
    if (short) notes.push(`${short} ${short === 1 ? "tray has" : "trays have"} fewer than ${k} free`);
    return {
      key,
      eligible,
      text: `domain ${shortDomain(key)} has ${eligible} eligible${notes.length ? `: ${joinNotes(notes, 8)}` : ""}`,
    };
  });
  parts.sort((a, b) => b.eligible - a.eligible || compareText(a.key, b.key));
  const shown = parts.slice(0, 3).map((p) => p.text);
  return parts.length > 3 ? `${shown.join("; ")}; and ${parts.length - 3} more domains` : shown.join("; ");
}

function ibPart(need: string, nodes: readonly PlaceNode[], fits: readonly NodeFit[]): string {
  const counts = new Map<string, number>();
  for (const node of nodes) {
    for (const fab of node.ibFabrics)
      if (fab.hcas.some((h) => h.active)) counts.set(fab.name, counts.get(fab.name) ?? 0);
  }
  if (!counts.size) return `no InfiniBand fabric has ${need}`;
  for (const f of fits) {
    if (!f.set || !f.ports.length) continue;
    const names = new Set(f.node.ibFabrics.filter((fab) => fab.hcas.some((h) => h.active)).map((fab) => fab.name));
    for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const have = [...counts.entries()].sort(byText(([name]) => name)).map(([name, c]) => `${name} has ${c}`);
  return `no InfiniBand fabric has ${need} (${joinNotes(have)})`;
}

/** One reason for a deployment tried with several profiles: the common one, or each profile's in order. */
export function combineReasons(tries: readonly { profile: string; reason: string }[]): string {
  const distinct = [...new Set(tries.map((t) => t.reason))];
  if (distinct.length <= 1) return distinct[0] ?? "no profile to try";
  return tries
    .map((t) => (t.reason.startsWith(`profile ${t.profile} `) ? t.reason : `profile ${t.profile}: ${t.reason}`))
    .join("; ");
}
