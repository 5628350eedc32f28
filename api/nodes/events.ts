import { domainKey, isJoined, notJoinedReason } from "../../shared/fabric.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import type { NewEvent } from "../db/events.js";

const list = (xs: (string | number)[]) => xs.join(", ");

/**
 * Events for what changed between two inventories of one node: GPUs leaving or joining the NVLink
 * fabric (one event for the whole node, however many cards moved at once), IMEX and HCA port changes.
 */
export function inventoryEvents(nodeId: string, before: Inventory, after: Inventory): NewEvent[] {
  const out: NewEvent[] = [];
  const was = new Map(before.gpus.map((g) => [g.uuid, g]));
  const left: { index: number; domain?: string; reason: string }[] = [];
  const joined: { index: number; domain: string }[] = [];
  for (const g of after.gpus) {
    const prev = was.get(g.uuid);
    if (!prev) continue;
    if (isJoined(prev.fabric) && !isJoined(g.fabric))
      left.push({ index: g.index, domain: domainKey(prev.fabric), reason: notJoinedReason(g.fabric)! });
    if (!isJoined(prev.fabric) && isJoined(g.fabric)) joined.push({ index: g.index, domain: domainKey(g.fabric)! });
  }
  if (left.length) {
    const wasJoined = before.gpus.filter((g) => isJoined(g.fabric)).length;
    const domains = [...new Set(left.map((l) => l.domain))].join(", ");
    const reasons = [...new Set(left.map((l) => l.reason))].join("; ");
    const who =
      left.length === wasJoined && wasJoined > 1 ? `all ${wasJoined} GPUs` : `GPU ${list(left.map((l) => l.index))}`;
    out.push({
      type: "fabric_left",
      nodeId,
      message: `${nodeId}: ${who} left NVLink domain ${domains} (${reasons})`,
      data: { gpus: left.map((l) => l.index), domains: [...new Set(left.map((l) => l.domain))], reasons: left },
    });
  }
  if (joined.length) {
    const domains = [...new Set(joined.map((j) => j.domain))];
    out.push({
      type: "fabric_joined",
      nodeId,
      message: `${nodeId}: GPU ${list(joined.map((j) => j.index))} joined NVLink domain ${domains.join(", ")}`,
      data: { gpus: joined.map((j) => j.index), domains },
    });
  }
  if (before.imex.state !== after.imex.state || before.imex.channels !== after.imex.channels) {
    out.push({
      type: "imex_changed",
      nodeId,
      message: `${nodeId}: IMEX ${before.imex.state} (${before.imex.channels} channels) → ${after.imex.state} (${after.imex.channels} channels)`,
      data: { from: before.imex, to: after.imex },
    });
  }
  const ports = new Map(before.hcas.flatMap((h) => h.ports.map((p) => [`${h.name}/${p.port}`, p.state] as const)));
  const changed = after.hcas.flatMap((h) =>
    h.ports.flatMap((p) => {
      const prev = ports.get(`${h.name}/${p.port}`);
      return prev !== undefined && prev !== p.state ? [{ hca: h.name, port: p.port, from: prev, to: p.state }] : [];
    }),
  );
  if (changed.length) {
    out.push({
      type: "hca_port_changed",
      nodeId,
      message: `${nodeId}: ${changed.map((p) => `${p.hca} port ${p.port} ${p.from} → ${p.to}`).join("; ")}`,
      data: { ports: changed },
    });
  }
  return out;
}
