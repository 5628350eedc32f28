// Console sessions and CSRF. Login takes an admin token once (checked like a bearer token) and opens a session: the
// cookie carries a random secret, the database only its hash, the admin token's id and the session's CSRF token.
// Revoking that admin token ends its sessions; logout deletes the row. Every console form sends the CSRF token back in
// a hidden field; the cookie is also SameSite=Strict, and a POST from another origin is refused outright.
import { and, eq, gt, lte } from "drizzle-orm";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import type { Role } from "../../shared/schemas/token.js";
import type { Actor } from "../audit.js";
import { auditEvent } from "../audit.js";
import { identify } from "../auth.js";
import type { Q, Store } from "../db/client.js";
import { insertEvents } from "../db/events.js";
import { adminTokens, consoleSessions } from "../db/schema.js";
import { constantTimeEqual, hashSecret, randomBase62 } from "../db/secrets.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { roleAllows, roleNeeded } from "../roles.js";

export const SESSION_COOKIE = "llmgw_console";
export const SESSION_TTL_S = 12 * 3600;
export const CSRF_FIELD = "_csrf";
const COOKIE_PATH = "/admin";

/** A live session; `role` is its admin token's, read afresh on every request. */
export type ConsoleSession = {
  hash: string;
  tokenId: string;
  csrf: string;
  expiresAt: number;
  role: Role;
  tokenName: string;
};
export type ConsoleEnv = { Variables: AppEnv["Variables"] & { session: ConsoleSession } };

/** The admin token behind `token` as an actor, or undefined when it is not a live admin token (the API's check). */
export async function loginActor(c: Context<ConsoleEnv>, token: string): Promise<Actor | undefined> {
  try {
    // The console's context is the API's with one variable more; identify() reads only the dependencies.
    const id = await identify(c as unknown as Context<AppEnv>, token.trim());
    return id.kind === "admin" ? { id: id.row.id, name: id.row.name, role: id.row.role, via: "console" } : undefined;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return undefined;
    throw e;
  }
}

/** Stores a new session for an admin token (dropping expired ones) and returns the cookie's secret. */
export async function openSession(
  store: Store,
  tokenId: string,
  now: number,
): Promise<{ secret: string; session: Omit<ConsoleSession, "role" | "tokenName"> }> {
  const secret = randomBase62(43);
  const session = {
    hash: await hashSecret(secret),
    tokenId,
    csrf: randomBase62(32),
    createdAt: now,
    expiresAt: now + SESSION_TTL_S * 1000,
  };
  await store.write(async (tx) => {
    await tx.delete(consoleSessions).where(lte(consoleSessions.expiresAt, now));
    await tx.insert(consoleSessions).values(session);
  });
  return { secret, session };
}

/** The live session whose cookie secret is `secret`, if its admin token still exists. */
export async function findSession(q: Q, secret: string, now: number): Promise<ConsoleSession | undefined> {
  const hash = await hashSecret(secret);
  const [row] = await q
    .select({
      hash: consoleSessions.hash,
      tokenId: consoleSessions.tokenId,
      csrf: consoleSessions.csrf,
      expiresAt: consoleSessions.expiresAt,
      role: adminTokens.role,
      tokenName: adminTokens.name,
    })
    .from(consoleSessions)
    .innerJoin(adminTokens, eq(adminTokens.id, consoleSessions.tokenId))
    .where(and(eq(consoleSessions.hash, hash), gt(consoleSessions.expiresAt, now)));
  return row && constantTimeEqual(row.hash, hash) ? row : undefined;
}

/** Deletes a session. */
export async function closeSession(store: Store, hash: string): Promise<void> {
  await store.write((tx) => tx.delete(consoleSessions).where(eq(consoleSessions.hash, hash)));
}

/** True when the request came over HTTPS (directly, or as a TLS-terminating proxy says). */
function overHttps(c: Context): boolean {
  return (
    new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto")?.split(",")[0]?.trim() === "https"
  );
}

/** Sets the session cookie: HttpOnly, SameSite=Strict, Path=/admin, Secure over HTTPS. */
export function setSessionCookie(c: Context, secret: string): void {
  setCookie(c, SESSION_COOKIE, secret, {
    httpOnly: true,
    sameSite: "Strict",
    secure: overHttps(c),
    path: COOKIE_PATH,
    maxAge: SESSION_TTL_S,
  });
}

/** Tells the browser to drop the session cookie. */
export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { httpOnly: true, sameSite: "Strict", secure: overHttps(c), path: COOKIE_PATH });
}

const NEXT = /^\/admin(\/[A-Za-z0-9._~\-/]*)?(\?[A-Za-z0-9._~\-=&%]*)?$/;

/** A path under /admin to return to after login; anything else (another site, `..`, `//`) becomes /admin. */
export function safeNext(next: string | undefined): string {
  if (!next || !NEXT.test(next) || next.includes("//")) return "/admin";
  return next
    .split("?")[0]!
    .split("/")
    .some((s) => s === "." || s === "..")
    ? "/admin"
    : next;
}

/** False when a browser says the request came from another site (Origin host or Sec-Fetch-Site). */
export function sameOrigin(c: Context): boolean {
  if (c.req.header("sec-fetch-site") === "cross-site") return false;
  const origin = c.req.header("origin");
  if (!origin) return true;
  try {
    return (
      new URL(origin).host === (c.req.header("x-forwarded-host") ?? c.req.header("host") ?? new URL(c.req.url).host)
    );
  } catch {
    return false;
  }
}

/** Console pages: the session from the cookie, or a redirect to the login page (which comes back here). */
export const requireSession = createMiddleware<ConsoleEnv>(async (c, next) => {
  const secret = getCookie(c, SESSION_COOKIE);
  const session = secret ? await findSession(c.var.deps.store.db, secret, c.var.deps.now()) : undefined;
  if (!session) {
    if (secret) clearSessionCookie(c);
    const back =
      c.req.method === "GET" ? `?next=${encodeURIComponent(c.req.path + (new URL(c.req.url).search || ""))}` : "";
    return c.redirect(`/admin/login${back}`, 303);
  }
  c.set("session", session);
  await next();
});

/** True when a POSTed form carries this session's CSRF token and came from this site. */
export async function csrfOk(c: Context<ConsoleEnv>): Promise<boolean> {
  if (!sameOrigin(c)) return false;
  const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const sent = body[CSRF_FIELD];
  return typeof sent === "string" && constantTimeEqual(sent, c.var.session.csrf);
}

/** True when the session's role may do what the API route `METHOD /path` does (api/roles.ts). */
export const sessionMay = (s: ConsoleSession, route: string) => {
  const [method = "", path = ""] = route.split(" ");
  return roleAllows(s.role, roleNeeded(method, path));
};

/** The session's admin token as the actor of what it changes (audit events). */
export const sessionActor = (s: ConsoleSession): Actor => ({
  id: s.tokenId,
  name: s.tokenName,
  role: s.role,
  via: "console",
});

/** Records a console login, or a failed one (no actor: what was typed is never stored). */
export async function recordLogin(store: Store, now: number, actor: Actor | undefined): Promise<void> {
  const event = actor
    ? auditEvent("console_login", { kind: "session", name: actor.id }, actor, "console login")
    : auditEvent(
        "console_login_failed",
        { kind: "session", name: "-" },
        undefined,
        "console login refused: not a live admin token",
      );
  await store.write((tx) => insertEvents(tx, now, [event]));
}
