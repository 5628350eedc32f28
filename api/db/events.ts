import { and, desc, eq, gt, lt, type SQL } from "drizzle-orm";
import type { EventType } from "../../shared/schemas/event.js";
import { type Q, txEvents } from "./client.js";
import { events } from "./schema.js";

/** An event about to be stored (its id and time are given when it is inserted). */
export type NewEvent = { type: EventType; nodeId: string | null; message: string; data?: Record<string, unknown> };

/** Appends events, all stamped `at`. */
export async function insertEvents(q: Q, at: number, list: NewEvent[]) {
  if (!list.length) return;
  txEvents.get(q)?.push(...list);
  await q
    .insert(events)
    .values(list.map((e) => ({ at, type: e.type, nodeId: e.nodeId, message: e.message, data: e.data ?? null })));
}

/** Events newest first, filtered by node and type, between id cursors (`after` to follow, `before` to page back). */
export async function listEvents(
  q: Q,
  f: { nodeId?: string; type?: EventType; after?: number; before?: number; limit: number },
) {
  const where: SQL[] = [];
  if (f.nodeId) where.push(eq(events.nodeId, f.nodeId));
  if (f.type) where.push(eq(events.type, f.type));
  if (f.after !== undefined) where.push(gt(events.id, f.after));
  if (f.before !== undefined) where.push(lt(events.id, f.before));
  const rows = await q
    .select()
    .from(events)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(events.id))
    .limit(f.limit);
  return rows.map((r) => ({ ...r, type: r.type as EventType }));
}
