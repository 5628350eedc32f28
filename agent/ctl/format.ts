// `llmgw ctl`'s tables of the fleet: nodes, one node, deployments and replicas, the plan. Pure: data and a clock
// reading in, text out.
import { domainKey, isJoined, notJoinedReason } from "../../shared/fabric.js";
import type { Deployment } from "../../shared/schemas/deployment.js";
import type { Node, NodeSummary } from "../../shared/schemas/node.js";
import type { Capacity } from "../../shared/schemas/plan.js";
import type { ReplicaLogs, ReplicaView } from "../../shared/schemas/replica.js";
import { transportReason } from "../../shared/schemas/transport.js";
import type { z } from "../../shared/z.js";
import { table } from "../inventory.js";

type NodeSummaryT = z.infer<typeof NodeSummary>;
type NodeT = z.infer<typeof Node>;
type DeploymentT = z.infer<typeof Deployment>;
type ReplicaT = z.infer<typeof ReplicaView>;

/** Lines with a trailing newline; an empty list prints nothing. */
export const text = (lines: string[]) => (lines.length ? `${lines.join("\n")}\n` : "");

/** A table with a header, or `none` when there are no rows. */
export function grid(header: string[], rows: string[][], none: string, indent = ""): string[] {
  return rows.length ? table([header, ...rows], indent) : [`${indent}${none}`];
}

/** "12s ago", "5m ago", "3h ago", "2d ago"; "never" for null. */
export function ago(at: number | null, now: number): string {
  if (at === null) return "never";
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  if (s < 172800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

/** A moment as `2025-11-30 17:40Z`. */
export const when = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")}Z`;

/** Devices by class as `h100-80g × 8, a100-80g-mig-3g.40gb × 2` (largest count first), `-` for none. */
export function classList(classes: Record<string, number>): string {
  const entries = Object.entries(classes).filter(([, n]) => n > 0);
  entries.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return entries.map(([c, n]) => `${c} × ${n}`).join(", ") || "-";
}

const gib = (mib: number) => `${Math.round(mib / 1024)} GiB`;

/** A card's MIG mode: `-` without MIG, `Disabled`, or `Enabled, 3 instance(s)`; a pending change after it. */
function migCell(mig: NodeT["inventory"]["gpus"][number]["mig"]): string {
  if (!mig) return "-";
  const now = mig.current === "Enabled" ? `Enabled, ${mig.instances.length} instance(s)` : mig.current;
  return mig.pending && mig.pending !== mig.current ? `${now} (pending ${mig.pending})` : now;
}

/** `llmgw ctl nodes`: one line a node. */
export function formatNodes(items: NodeSummaryT[], now: number): string {
  const rows = items.map((n) => [n.id, n.state, n.pool, classList(n.classes), ago(n.lastSeenAt, now)]);
  return text(grid(["NODE", "STATE", "POOL", "DEVICES", "LAST SEEN"], rows, "no nodes"));
}

/** `llmgw ctl node ID`: the node, its GPUs, its placeable devices and its shards. */
export function formatNode(n: NodeT, now: number): string {
  const inv = n.inventory;
  const labels =
    Object.entries(n.labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ") || "none";
  const lines = [
    `node ${n.id} (${n.hostname}, ${n.mgmtAddr}${n.mgmtInterface ? ` on ${n.mgmtInterface}` : ""})`,
    `  state      ${n.state}${n.state !== n.adminState ? ` (set: ${n.adminState})` : ""}; last seen ${ago(n.lastSeenAt, now)}, last heartbeat ${ago(n.lastHeartbeatAt, now)}`,
    `  pool       ${n.pool}; labels ${labels}`,
    `  agent      ${n.agentVersion}; driver ${inv.host.nvidiaDriver ?? "not found"}; registered ${when(n.registeredAt)}`,
    `  imex       ${inv.imex.state}${inv.imex.domainState ? `, domain ${inv.imex.domainState}` : ""}, ${inv.imex.channels} channel(s)`,
    `  devices    ${classList(n.classes)}`,
    "",
    `GPUs (${inv.gpus.length}, via ${inv.gpuSource})`,
    ...grid(
      ["GPU", "NAME", "CLASS", "MEMORY", "MIG", "HEALTH", "NVLINK FABRIC"],
      inv.gpus.map((g) => [
        String(g.index),
        g.name,
        g.class,
        gib(g.memoryTotalMiB),
        migCell(g.mig),
        g.health.problems.length ? g.health.problems.join("; ") : "ok",
        isJoined(g.fabric) ? `joined ${domainKey(g.fabric)}` : (notJoinedReason(g.fabric) ?? "-"),
      ]),
      "none",
      "  ",
    ),
    "",
    "Devices",
    ...grid(
      ["DEVICE", "CLASS", "MEMORY", "UUID"],
      n.devices.map((d) => [d.label, d.class, gib(d.memoryTotalMiB), d.uuid]),
      "none placeable",
      "  ",
    ),
    "",
    "Shards",
    ...grid(
      ["SHARD", "REPLICA", "STATE", "UPDATED", "MESSAGE"],
      n.shards.map((s) => [s.shardId, s.replicaId ?? "-", s.state, ago(s.updatedAt, now), s.message ?? ""]),
      "none",
      "  ",
    ),
  ];
  return text(lines);
}

/** Shards of a replica as `node[devices] state`, one after another. */
const shardList = (r: ReplicaT) =>
  r.shards.map((s) => `${s.nodeId}[${s.devices.join(",")}] ${s.state}`).join(", ") || "-";

/** `llmgw ctl status`: deployments with replica counts and why the rest are pending, then the replicas. */
/** Devices by class (MIG classes as their own rows): total, free, used, and how many are unavailable and why. */
function classGrid(classes: Capacity["classes"]): string[] {
  return grid(
    ["CLASS", "TOTAL", "FREE", "USED", "UNAVAILABLE"],
    classes.map((k) => [
      k.class,
      String(k.total),
      String(k.free),
      String(k.used),
      k.unavailable.map((u) => `${u.count} ${u.reason}`).join("; ") || "-",
    ]),
    "no devices",
  );
}

/** `llmgw ctl status`: deployments (and why replicas are pending), replicas, then devices by class. */
export function formatStatus(deployments: DeploymentT[], replicas: ReplicaT[], classes?: Capacity["classes"]): string {
  const lines = grid(
    ["DEPLOYMENT", "MODEL", "POOL", "PHASE", "DESIRED", "PLACED", "READY"],
    deployments.map((d) => [
      d.name,
      d.spec.model,
      d.spec.pool ?? "default",
      d.status.phase,
      String(d.status.desired),
      String(d.status.placed),
      String(d.status.ready),
    ]),
    "no deployments",
  );
  const failed = deployments.flatMap((d) => (d.status.failure ? [[d.name, "Failed", d.status.failure]] : []));
  if (failed.length) lines.push("", "Failed", ...table(failed));
  const pending = deployments.flatMap((d) =>
    d.status.pending.filter((p) => p.reason !== d.status.failure).map((p) => [d.name, `${p.count} pending`, p.reason]),
  );
  if (pending.length) lines.push("", "Pending", ...table(pending));
  lines.push(
    "",
    ...grid(
      ["REPLICA", "DEPLOYMENT", "PROFILE", "STATE", "ENDPOINT", "SHARDS"],
      replicas.map((r) => [r.id, r.deployment, r.profile, r.state, r.endpoint ?? "-", shardList(r)]),
      "no replicas",
    ),
  );
  // shards not serving that failed before: why, in one line (`llmgw ctl logs <replica>` shows the log's last lines)
  const failures = replicas.flatMap((r) =>
    r.shards.flatMap((s) =>
      s.failure && s.state !== "ready" ? [[`${r.id}/${s.shardId}`, `${s.state}:`, s.failure]] : [],
    ),
  );
  if (failures.length) lines.push("", "Failures", ...table(failures));
  // multi-node shards whose NCCL is not on the transport they were placed for, or did not say which it is on
  const transport = replicas.flatMap((r) =>
    r.shards.flatMap((s) =>
      s.transport && (s.transport.verdict === "degraded" || s.transport.verdict === "unverified")
        ? [[`${r.id}/${s.shardId}`, `${s.transport.verdict}:`, transportReason(s.transport)]]
        : [],
    ),
  );
  if (transport.length) lines.push("", "Transport", ...table(transport));
  if (classes) lines.push("", ...classGrid(classes));
  return text(lines);
}

/** `llmgw ctl logs`: each shard's last failure, then its engine log's last lines, indented. */
export function formatLogs(logs: z.infer<typeof ReplicaLogs>, shard?: string): string {
  const shown = logs.shards.filter((s) => !shard || s.shardId === shard || s.shardId === `${logs.replica}-${shard}`);
  if (!shown.length) return text([`replica ${logs.replica} has no shard ${shard}`]);
  return text(
    shown.flatMap((s) => [
      `${s.shardId} on ${s.nodeId}, ${s.state}: ${s.text ?? "no failure reported"}`,
      ...(s.failure?.logTail ?? []).map((l) => `  ${l}`),
    ]),
  );
}

/** `llmgw ctl get replicas`. */
export function formatReplicas(replicas: ReplicaT[]): string {
  return text(
    grid(
      ["REPLICA", "DEPLOYMENT", "PROFILE", "STATE", "ENDPOINT", "SHARDS"],
      replicas.map((r) => [r.id, r.deployment, r.profile, r.state, r.endpoint ?? "-", shardList(r)]),
      "no replicas",
    ),
  );
}

/**
 * `llmgw ctl plan`: devices by class, then how many more replicas of each profile fit in each pool, where or why not.
 */
export function formatPlan(c: Capacity): string {
  const lines = classGrid(c.classes);
  const where = (nodes: Record<string, number>) =>
    Object.entries(nodes)
      .map(([n, k]) => `${n} × ${k}`)
      .join(", ");
  lines.push(
    "",
    ...grid(
      ["MODEL", "PROFILE", "CLASS", "POOL", "FITS", "WHERE / WHY NOT"],
      c.profiles.map((p) => [
        p.model,
        p.profile,
        p.gpuClass,
        p.pool,
        String(p.fits),
        p.fits > 0 ? where(p.nodes) : (p.reason ?? "-"),
      ]),
      "no model profiles",
    ),
  );
  return text(lines);
}
