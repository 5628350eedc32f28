// The shape of an audit event (api/audit.ts builds them from requests): what was changed, by whom. Here, on the
// database floor, so that the writes that make a change (api/db/nodes.ts) can record it in the same transaction.
import type { Actor, NewEvent, Subject } from "./events.js";

export type { Actor, Subject } from "./events.js";

/** An audit event: `type`, what it was done to, by whom, and anything more (a diff) in `data`. */
export function auditEvent(
  type: NewEvent["type"],
  subject: Subject,
  actor: Actor | undefined,
  message: string,
  data: Record<string, unknown> = {},
  nodeId: string | null = null,
): NewEvent {
  const by = actor ? ` by ${actor.name ?? actor.id}${actor.via === "console" ? " (console)" : ""}` : "";
  return {
    type,
    nodeId,
    message: `${message}${by}`,
    data: { ...data, ...(actor ? { via: actor.via } : {}) },
    subject,
    ...(actor ? { actor } : {}),
  };
}
