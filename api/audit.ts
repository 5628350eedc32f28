// The audit trail: who changed what. Every change an operator makes (declarations, node actions, tokens and keys,
// console logins) is an event with its actor (the admin token's id, name and role — never a secret), the kind and
// name of what changed and, for declarations, a compact diff of the spec.
import { type Actor, auditEvent } from "./db/audit-event.js";
import type { NewEvent } from "./db/events.js";
import type { Principal } from "./deps.js";

/** One changed top-level key of a spec: its value before and after (JSON, truncated; absent when there was none). */
export type SpecChange = { key: string; before?: string; after?: string };

export { type Actor, auditEvent, type Subject } from "./db/audit-event.js";

const MAX_VALUE = 120;
const MAX_KEYS = 32;
// environment values and the like can hold credentials: their names are shown, their values never
const SECRETISH = /token|secret|password|passwd|key|credential|auth/i;

/** The actor behind an API request (admin tokens only: nodes and join tokens change nothing an operator audits). */
export function actorOf(p: Principal | undefined): Actor | undefined {
  if (p?.kind !== "admin") return undefined;
  return { id: p.tokenId, ...(p.tokenName ? { name: p.tokenName } : {}), role: p.role, via: "api" };
}

/** A value as the diff shows it: JSON, secret-looking entries masked, cut to MAX_VALUE characters. */
function shown(key: string, v: unknown): string | undefined {
  if (v === undefined) return undefined;
  const masked = key === "env" && v && typeof v === "object" ? mask(v) : SECRETISH.test(key) ? "***" : v;
  const s = JSON.stringify(masked) ?? String(masked);
  return s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE - 1)}…` : s;
}

function mask(v: object): unknown {
  if (Array.isArray(v)) return v.map((e) => (Array.isArray(e) ? [e[0], "***"] : "***"));
  return Object.fromEntries(Object.keys(v).map((k) => [k, "***"]));
}

const asRecord = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The top-level keys that differ between two specs, with their values before and after (pure). */
export function specDiff(before: unknown, after: unknown): SpecChange[] {
  const a = asRecord(before);
  const b = asRecord(after);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys
    .filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
    .slice(0, MAX_KEYS)
    .map((k) => {
      const c: SpecChange = { key: k };
      const was = shown(k, a[k]);
      const now = shown(k, b[k]);
      if (was !== undefined) c.before = was;
      if (now !== undefined) c.after = now;
      return c;
    });
}

/** The kind slug of a declarative kind's display name ("API key" → "api_key"). */
export const kindSlug = (kind: string) => kind.toLowerCase().replace(/\s+/g, "_");

const parsed = (spec: string | undefined) => (spec === undefined ? undefined : (JSON.parse(spec) as unknown));

/** The audit event of a declaration written (`after` set) or deleted, with the diff of its stored spec JSON. */
export function declaredEvent(
  kind: string,
  name: string,
  before: string | undefined,
  after: { spec: string; version: number } | undefined,
  actor: Actor | undefined,
): NewEvent {
  const diff = specDiff(parsed(before), parsed(after?.spec));
  const type = !after ? "resource_deleted" : before === undefined ? "resource_created" : "resource_updated";
  const what = after
    ? `${kind} ${name} ${before === undefined ? "created" : "updated"} (version ${after.version})`
    : `${kind} ${name} deleted`;
  return auditEvent(type, { kind: kindSlug(kind), name }, actor, what, { diff });
}
