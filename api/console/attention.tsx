/** @jsxImportSource hono/jsx */
// What is wrong in the fleet now, for the top of the overview: trays out of their NVLink domain (and shards still on
// them), IMEX down or its peer list off, InfiniBand ports down, discovery errors, nodes late or lost, replicas failed
// or degraded (NCCL off the fabric they were placed on), failed deployments. Each
// item links to the page that shows it. fleetProblems() is pure: the same input gives the same list.
import type { Child } from "hono/jsx";
import type { Inventory } from "../../shared/schemas/inventory.js";
import type { NodeState } from "../../shared/schemas/node.js";
import { type ShardTransport, transportReason } from "../../shared/schemas/transport.js";
import type { NvlinkView } from "../views/nvlink.js";
import { Ago } from "./layout.js";

export type Problem = { severity: "bad" | "warn"; href: string; subject: string; text: Child };

export type FleetInput = {
  nodes: readonly { id: string; state: NodeState; lastSeenAt: number; inv: Inventory }[];
  nvlink: NvlinkView;
  deployments: readonly { name: string; status: { phase: string; failure?: string } }[];
  replicas: readonly {
    id: string;
    deployment: string;
    state: string;
    shards: readonly {
      nodeId: string;
      rank: number;
      devices: string[];
      state: string;
      failure: string | null;
      transport?: ShardTransport | null;
    }[];
  }[];
  now: number;
  /** A node not heard from for longer than this (but not yet lost) has a late heartbeat. */
  lateAfterS: number;
};

const nodeHref = (id: string) => `/admin/nodes/${encodeURIComponent(id)}`;

/** Everything that needs an operator's look now, worst first within each kind. */
export function fleetProblems(f: FleetInput): Problem[] {
  const out: Problem[] = [];
  const outTrays = new Set<string>();
  for (const d of f.nvlink.domains) {
    const href = `/admin/nvlink#domain-${d.key}`;
    for (const t of d.trays) {
      const name = `Tray ${t.trayIndex ?? "?"} (${t.node})`;
      if (!t.eligible) {
        outTrays.add(t.node);
        out.push({
          severity: "bad",
          href,
          subject: name,
          text: `is out of NVLink domain ${d.key}: ${t.reasons.join(", ")}`,
        });
      } else if (t.degraded)
        out.push({
          severity: "warn",
          href,
          subject: name,
          text: `is degraded, placed on last: ${t.warnings.join(", ")}`,
        });
      if (t.imexConfig?.warning) out.push({ severity: "warn", href, subject: name, text: t.imexConfig.warning });
    }
    for (const s of d.shards)
      if (outTrays.has(s.node) && s.state !== "stopped")
        out.push({
          severity: "bad",
          href: nodeHref(s.node),
          subject: `Shard ${s.shardId}`,
          text: `of ${s.deployment} (replica ${s.replicaId}, rank ${s.rank}) is ${s.state} on ${s.node}, a tray that is out`,
        });
  }
  for (const n of f.nodes) {
    const href = nodeHref(n.id);
    if (n.state === "lost")
      out.push({
        severity: "bad",
        href,
        subject: n.id,
        text: (
          <>
            lost: last heard from <Ago at={n.lastSeenAt} now={f.now} />
          </>
        ),
      });
    else if (f.now - n.lastSeenAt > f.lateAfterS * 1000)
      out.push({
        severity: "warn",
        href,
        subject: n.id,
        text: (
          <>
            heartbeat late: last heard from <Ago at={n.lastSeenAt} now={f.now} />
          </>
        ),
      });
    const imex = n.inv.imex.state;
    if ((imex === "down" || imex === "degraded") && !outTrays.has(n.id))
      out.push({ severity: "bad", href, subject: n.id, text: `IMEX ${imex}` });
    const down = n.inv.hcas.flatMap((h) =>
      h.ports.filter((p) => p.state !== "ACTIVE").map((p) => `${h.name} port ${p.port} ${p.state}`),
    );
    if (down.length)
      out.push({ severity: "bad", href, subject: n.id, text: `InfiniBand ports not active: ${down.join(", ")}` });
    for (const e of n.inv.errors)
      out.push({ severity: "warn", href, subject: n.id, text: `discovery error from ${e.source}: ${e.message}` });
  }
  for (const d of f.deployments)
    if (d.status.phase === "Failed")
      out.push({
        severity: "bad",
        href: "/admin/deployments",
        subject: d.name,
        text: `Failed: ${d.status.failure ?? "its replicas keep failing"}`,
      });
  for (const r of f.replicas)
    if (r.state === "degraded")
      out.push({
        severity: "warn",
        href: `/admin/deployments#replica-${r.id}`,
        subject: `Replica ${r.id}`,
        text: `of ${r.deployment} is degraded: ${r.shards
          .filter((s) => s.transport?.verdict === "degraded")
          .map((s) => `rank ${s.rank} on ${s.nodeId}: ${transportReason(s.transport!)}`)
          .join("; ")}`,
      });
    else if (r.state === "failed")
      out.push({
        severity: "bad",
        href: `/admin/deployments#replica-${r.id}`,
        subject: `Replica ${r.id}`,
        text: `of ${r.deployment} failed: ${r.shards
          .filter((s) => s.state === "failed")
          .map((s) => `rank ${s.rank} on ${s.nodeId} GPU ${s.devices.join(", ")}${s.failure ? ` (${s.failure})` : ""}`)
          .join("; ")}`,
      });
  return out;
}

/** The "Needs attention" section: each problem linking to where to look, or plainly that nothing is wrong. */
export function Attention(p: { problems: Problem[] }) {
  return (
    <section aria-labelledby="h-attention" class="attention">
      <h2 id="h-attention">{p.problems.length ? `Needs attention (${p.problems.length})` : "Needs attention"}</h2>
      {p.problems.length ? (
        <ul aria-label="What is wrong now">
          {p.problems.map((x) => (
            <li data-severity={x.severity}>
              <a href={x.href}>{x.subject}</a> {x.text}
            </li>
          ))}
        </ul>
      ) : (
        <p class="notice done" role="status">
          Nothing is wrong now: every node is heard from, every tray is in its NVLink domain, IMEX and InfiniBand are
          up, agents report no discovery errors, and no replica or deployment has failed.
        </p>
      )}
    </section>
  );
}
