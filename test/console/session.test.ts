import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_TTL_S } from "../../api/console/session.js";
import { consoleSessions } from "../../api/db/schema.js";
import { hashSecret } from "../../api/db/secrets.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";
import { csrfOf, get, login, post, sessionCookie } from "./console.js";

let t: TestApp;
let nodeToken: string;
beforeAll(async () => {
  t = await createTestApp();
  const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
  nodeToken = (await t.call("POST", "/api/v1/agents/register", { token: join.json.token, body: registerBody("n1") }))
    .json.nodeToken;
});
afterAll(() => t.close());

const PAGES = [
  "/admin",
  "/admin/nodes",
  "/admin/nodes/n1",
  "/admin/nvlink",
  "/admin/deployments",
  "/admin/plan",
  "/admin/no-such-page",
];

describe("login", () => {
  it("shows the form without a session", async () => {
    const r = await get(t, "/admin/login?next=/admin/nvlink");
    expect(r.status).toBe(200);
    expect(r.text).toContain('<form class="login" method="post" action="/admin/login">');
    expect(r.text).toContain('name="next" value="/admin/nvlink"');
    expect(r.headers.get("set-cookie")).toBeNull();
  });

  it("sets an HttpOnly, SameSite=Strict, Path=/admin session cookie that is not the admin token, and goes to `next`", async () => {
    const r = await post(t, "/admin/login", { token: t.adminToken, next: "/admin/nvlink" });
    expect(r.status).toBe(303);
    expect(r.location).toBe("/admin/nvlink");
    const set = r.headers.get("set-cookie")!;
    expect(set).toMatch(/^llmgw_console=[A-Za-z0-9]{43};/);
    expect(set).toContain("HttpOnly");
    expect(set).toContain("SameSite=Strict");
    expect(set).toContain("Path=/admin");
    expect(set).toContain(`Max-Age=${SESSION_TTL_S}`);
    expect(set).not.toContain("Secure");
    expect(set).not.toContain(t.adminToken);
    // the database keeps only the hash of the cookie's secret
    const secret = sessionCookie(r)!.split("=")[1]!;
    const rows = await t.db.select().from(consoleSessions);
    expect(rows.map((s) => s.hash)).toContain(await hashSecret(secret));
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect((await get(t, "/admin/nvlink", sessionCookie(r))).status).toBe(200);
  });

  it("marks the cookie Secure over HTTPS, directly or behind a TLS-terminating proxy", async () => {
    const direct = await t.app.request("https://console.example/admin/login", {
      method: "POST",
      body: new URLSearchParams({ token: t.adminToken }),
    });
    expect(direct.headers.get("set-cookie")).toMatch(/; Secure/);
    const proxied = await post(t, "/admin/login", { token: t.adminToken }, undefined, { "x-forwarded-proto": "https" });
    expect(proxied.headers.get("set-cookie")).toMatch(/; Secure/);
  });

  it.each([
    ["a wrong token", "llmgw_adm_wrongwrongwrongwrongwrongwrongwrongwron"],
    ["no token", ""],
    ["garbage", "not a token at all"],
  ])("refuses %s: 401, the form again with the error, no cookie", async (_, token) => {
    const r = await post(t, "/admin/login", { token, next: "/admin" });
    expect(r.status).toBe(401);
    expect(r.headers.get("set-cookie")).toBeNull();
    expect(r.text).toContain('role="alert"');
    expect(r.text).toContain("not a valid admin token");
  });

  it("refuses a node token: only admin tokens open the console", async () => {
    const r = await post(t, "/admin/login", { token: nodeToken });
    expect(r.status).toBe(401);
    expect(r.headers.get("set-cookie")).toBeNull();
  });

  it("refuses a login form posted from another site", async () => {
    const r = await post(t, "/admin/login", { token: t.adminToken }, undefined, { origin: "https://evil.example" });
    expect(r.status).toBe(401);
    expect(r.headers.get("set-cookie")).toBeNull();
    const fetched = await post(t, "/admin/login", { token: t.adminToken }, undefined, {
      "sec-fetch-site": "cross-site",
    });
    expect(fetched.headers.get("set-cookie")).toBeNull();
  });

  it.each([
    "https://evil.example/admin",
    "//evil.example/admin",
    "/api/v1/nodes",
    "/admin/../api",
    "javascript:alert(1)",
  ])("never sends the browser off the console after login (next=%s)", async (next) => {
    const r = await post(t, "/admin/login", { token: t.adminToken, next });
    expect(r.status).toBe(303);
    expect(r.location).toBe("/admin");
  });

  it("sends a signed-in browser on from the login page", async () => {
    const { cookie } = await login(t);
    const r = await get(t, "/admin/login?next=/admin/plan", cookie);
    expect(r.status).toBe(303);
    expect(r.location).toBe("/admin/plan");
  });
});

describe("pages need a session", () => {
  it.each(PAGES)("%s redirects to the login page without one, and comes back after", async (path) => {
    const r = await get(t, path);
    expect(r.status).toBe(303);
    expect(r.location).toBe(`/admin/login?next=${encodeURIComponent(path)}`);
  });

  it("treats an unknown session cookie as none, and clears it", async () => {
    const r = await get(t, "/admin", "llmgw_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    expect(r.status).toBe(303);
    expect(r.headers.get("set-cookie")).toMatch(/^llmgw_console=; Max-Age=0;/);
  });

  it("does not accept the admin token itself as the cookie, nor as a bearer token", async () => {
    expect((await get(t, "/admin", `llmgw_console=${t.adminToken}`)).status).toBe(303);
    expect((await get(t, "/admin", undefined, { authorization: `Bearer ${t.adminToken}` })).status).toBe(303);
  });

  it("serves every page with a session, with a strict content security policy and no caching", async () => {
    const { cookie } = await login(t);
    for (const path of PAGES) {
      const r = await get(t, path, cookie);
      expect(r.status, path).toBe(path === "/admin/no-such-page" ? 404 : 200);
      expect(r.headers.get("content-type")).toMatch(/^text\/html/);
      expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.text).toMatch(/^<!DOCTYPE html>/);
    }
  });

  it("serves the stylesheet and the refresh script to anyone (the login page needs them)", async () => {
    const css = await get(t, "/admin/static/style.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(css.text).toContain("prefers-reduced-motion");
    const js = await get(t, "/admin/static/console.js");
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.text).toContain("DOMParser");
  });

  it("ends the session when it expires", async () => {
    const { cookie } = await login(t);
    t.clock.advance(SESSION_TTL_S * 1000 + 1);
    const r = await get(t, "/admin", cookie);
    expect(r.status).toBe(303);
    expect(r.location).toContain("/admin/login");
  });

  it("ends the sessions of an admin token when the token is revoked", async () => {
    const made = await t.admin("POST", "/api/v1/tokens", { body: { name: "temp" } });
    const { cookie } = await login(t, made.json.token);
    expect((await get(t, "/admin", cookie)).status).toBe(200);
    expect((await t.admin("DELETE", `/api/v1/tokens/${made.json.id}`)).status).toBe(204);
    expect((await get(t, "/admin", cookie)).status).toBe(303);
  });
});

describe("logout", () => {
  it("needs the session's CSRF token: without it, 403 and the session lives on", async () => {
    const { cookie } = await login(t);
    expect((await post(t, "/admin/logout", {}, cookie)).status).toBe(403);
    expect((await post(t, "/admin/logout", { _csrf: "x".repeat(32) }, cookie)).status).toBe(403);
    expect((await get(t, "/admin", cookie)).status).toBe(200);
  });

  it("deletes the session and clears the cookie", async () => {
    const { cookie, csrf } = await login(t);
    const r = await post(t, "/admin/logout", { _csrf: csrf }, cookie);
    expect(r.status).toBe(303);
    expect(r.location).toBe("/admin/login");
    expect(r.headers.get("set-cookie")).toMatch(/^llmgw_console=; Max-Age=0; Path=\/admin; HttpOnly; SameSite=Strict/);
    // the old cookie is dead even if a browser kept it
    expect((await get(t, "/admin", cookie)).status).toBe(303);
    const again = await login(t);
    expect(csrfOf((await get(t, "/admin", again.cookie)).text)).not.toBe(csrf);
  });
});
