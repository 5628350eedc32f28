import { and, desc, eq, gt, gte, isNotNull, lt, or, type SQL } from "drizzle-orm";
import type { EventType } from "../../shared/schemas/event.js";
import type { Role } from "../../shared/schemas/token.js";
import { type Q, txEvents } from "./client.js";
import { events } from "./schema.js";

/** Who made a change: an admin token, over the API or through a console session. */
export type Actor = { id: string; name?: string; role?: Role; via: "api" | "console" };

/** What a change was done to: a kind ("model", "api_key", "node", "admin_token" …) and a name. */
export type Subject = { kind: string; name: string };

/** An event about to be stored (its id and time are given when it is inserted); audit events name actor and subject. */
export type NewEvent = {
  type: EventType;
  nodeId: string | null;
  message: string;
  data?: Record<string, unknown>;
  actor?: Actor;
  subject?: Subject;
};

/** Appends events, all stamped `at`. */
export async function insertEvents(q: Q, at: number, list: NewEvent[]) {
  if (!list.length) return;
  txEvents.get(q)?.push(...list);
  // in parts: an INSERT binds 10 values a row, and SQLite takes at most 32,766 in one statement (a liveness sweep
  // that finds a whole fleet silent writes an event per node)
  for (let first = 0; first < list.length; first += EVENTS_PER_INSERT)
    await insertPart(q, at, list.slice(first, first + EVENTS_PER_INSERT));
}

/** Events per INSERT at most. */
const EVENTS_PER_INSERT = 1000;

async function insertPart(q: Q, at: number, list: NewEvent[]) {
  await q.insert(events).values(
    list.map((e) => ({
      at,
      type: e.type,
      nodeId: e.nodeId,
      message: e.message,
      data: e.data ?? null,
      actorId: e.actor?.id ?? null,
      actorName: e.actor?.name ?? null,
      actorRole: e.actor?.role ?? null,
      kind: e.subject?.kind ?? null,
      name: e.subject?.name ?? null,
    })),
  );
}

/** What listEvents filters on; `actor` matches an actor's id or name, `audit` keeps only audit events. */
export type EventFilter = {
  nodeId?: string;
  type?: EventType;
  actor?: string;
  kind?: string;
  since?: number;
  audit?: boolean;
  after?: number;
  before?: number;
  limit: number;
};

/** Events newest first, filtered, between id cursors (`after` to follow, `before` to page back). */
export async function listEvents(q: Q, f: EventFilter) {
  const where: SQL[] = [];
  if (f.nodeId) where.push(eq(events.nodeId, f.nodeId));
  if (f.type) where.push(eq(events.type, f.type));
  if (f.actor) where.push(or(eq(events.actorId, f.actor), eq(events.actorName, f.actor))!);
  if (f.kind) where.push(eq(events.kind, f.kind));
  if (f.audit) where.push(isNotNull(events.kind));
  if (f.since !== undefined) where.push(gte(events.at, f.since));
  if (f.after !== undefined) where.push(gt(events.id, f.after));
  if (f.before !== undefined) where.push(lt(events.id, f.before));
  const rows = await q
    .select()
    .from(events)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(events.id))
    .limit(f.limit);
  return rows.map(({ actorId, actorName, actorRole, ...r }) => ({
    ...r,
    type: r.type as EventType,
    actor: actorId ? { id: actorId, name: actorName, role: actorRole as Role | null } : null,
  }));
}

/** Deletes events older than `retentionDays` before `now`; returns how many went. */
export async function pruneEvents(q: Q, now: number, retentionDays: number): Promise<number> {
  const gone = await q
    .delete(events)
    .where(lt(events.at, now - retentionDays * 86_400_000))
    .returning({ id: events.id });
  return gone.length;
}
