/** @jsxImportSource hono/jsx */
// What a shard's NCCL uses, as the node page's shards table and the deployments page's replicas show it: a multi-node
// shard's verdict with what NCCL reported (degraded in amber with the reason in words), a one-node shard's transport
// inside the node with no verdict; and a degraded replica's reason, served anyway or not by its deployment's policy.
import type { ShardTransport } from "../../shared/schemas/transport.js";
import { transportReason } from "../../shared/schemas/transport.js";
import type { TransportPolicy } from "../placement/serving.js";
import { Badge } from "./layout.js";

/** How a transport reads in a table cell: the badge (none for a one-node shard), the words, and whether they warn. */
export type TransportText = { badge: string | null; text: string; warn: boolean };

/** The words a shard's transport is shown in (pure); null when its agent reported none. */
export function transportText(t: ShardTransport | null | undefined): TransportText | null {
  if (!t) return null;
  const said = t.observed ?? t.via;
  switch (t.verdict) {
    case "local":
      return { badge: null, text: said ?? "inside the node", warn: false };
    case "ok":
      return { badge: "ok", text: said ?? `as placed (${t.expected})`, warn: false };
    case "degraded":
      return { badge: "degraded", text: transportReason(t), warn: true };
    case "pending":
      return { badge: "pending", text: "NCCL has not said which transport it uses yet", warn: false };
    case "unverified":
      return {
        badge: "unverified",
        text: t.reason ?? "the engine serves, NCCL did not say which transport",
        warn: false,
      };
  }
}

/** A shard's transport in a table cell; a dash when its agent reported none. */
export function TransportCell(p: { transport: ShardTransport | null | undefined }) {
  const t = transportText(p.transport);
  if (!t) return <span class="muted">—</span>;
  return (
    <span title={p.transport ? `placed on ${p.transport.expected}` : undefined}>
      {t.badge ? <Badge state={t.badge} /> : null}
      {t.badge ? " " : ""}
      <span class={t.warn ? "warning" : undefined}>{t.text}</span>
    </span>
  );
}

/** Under a degraded replica's state: which shard left its transport and why, and whether the router serves it. */
export function DegradedNote(p: {
  shards: readonly { shardId: string; transport: ShardTransport | null }[];
  policy: TransportPolicy;
}) {
  const shard = p.shards.find((s) => s.transport?.verdict === "degraded");
  if (!shard) return null;
  return (
    <>
      <div class="warning">
        {shard.shardId}: {transportText(shard.transport)?.text}
      </div>
      <div class="muted">
        {p.policy === "prefer"
          ? "served anyway (transport: prefer)"
          : "not served; moved to other nodes where a set fits (transport: require)"}
      </div>
    </>
  );
}
