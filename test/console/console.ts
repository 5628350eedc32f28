// Requests to the console as a browser makes them: form posts, the session cookie, the CSRF field of the pages.
import type { TestApp } from "../helpers/app.js";

export type Page = { status: number; headers: Headers; text: string; location: string | null };

async function send(t: TestApp, path: string, init: RequestInit): Promise<Page> {
  const res = await t.app.request(path, init);
  return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get("location") };
}

/** GET a console page, with the session cookie when given. */
export const get = (t: TestApp, path: string, cookie?: string, headers: Record<string, string> = {}) =>
  send(t, path, { headers: { ...(cookie ? { cookie } : {}), ...headers } });

/** POST a form (urlencoded, as browsers send it). */
export const post = (
  t: TestApp,
  path: string,
  form: Record<string, string>,
  cookie?: string,
  headers: Record<string, string> = {},
) =>
  send(t, path, {
    method: "POST",
    body: new URLSearchParams(form),
    headers: { ...(cookie ? { cookie } : {}), ...headers },
  });

/** The `name=value` part of the session cookie a response sets. */
export function sessionCookie(p: Page): string | undefined {
  return p.headers.get("set-cookie")?.split(";")[0];
}

/** The CSRF token in a page's forms. */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error("no CSRF field on the page");
  return m[1]!;
}

/** Logs in with an admin token; returns the session cookie and the session's CSRF token. */
export async function login(t: TestApp, token = t.adminToken): Promise<{ cookie: string; csrf: string }> {
  const r = await post(t, "/admin/login", { token, next: "/admin" });
  const cookie = sessionCookie(r);
  if (r.status !== 303 || !cookie) throw new Error(`login failed: ${r.status} ${r.text.slice(0, 200)}`);
  return { cookie, csrf: csrfOf((await get(t, "/admin", cookie)).text) };
}
