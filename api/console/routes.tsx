/** @jsxImportSource hono/jsx */
// The console under /admin: static files, login and logout, the pages (behind a session) and the node actions
// (behind the session's CSRF token). Every middleware here is scoped to /admin paths: this router is mounted at "/".
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { roleNeeded, roleRefusal } from "../roles.js";
import { auditPage } from "./audit.js";
import { deploymentsPage } from "./deployments.js";
import { page } from "./layout.js";
import { loginPage } from "./login.js";
import { nodePage } from "./node.js";
import { type ConsoleNodeVerb, nodeAction, VERB_ROUTE } from "./node-actions.js";
import { nodesPage } from "./nodes.js";
import { nvlinkPage } from "./nvlink.js";
import { overviewPage } from "./overview.js";
import { planPage } from "./plan.js";
import { SCRIPT } from "./script.js";
import {
  type ConsoleEnv,
  clearSessionCookie,
  closeSession,
  csrfOk,
  findSession,
  loginActor,
  openSession,
  recordLogin,
  requireSession,
  SESSION_COOKIE,
  safeNext,
  sameOrigin,
  sessionMay,
  setSessionCookie,
} from "./session.js";
import { STYLE } from "./style.js";
import { usagePage } from "./usage.js";

const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const headers = createMiddleware(async (c, next) => {
  await next();
  c.header("content-security-policy", CSP);
  c.header("x-content-type-options", "nosniff");
  c.header("referrer-policy", "same-origin");
  if (!c.res.headers.has("cache-control")) c.header("cache-control", "no-store");
});

const formLimit = bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.text("form too large", 413) });

/** 403: the form did not carry this session's CSRF token, or came from another site; nothing was changed. */
function forbidden(c: Context<ConsoleEnv>) {
  return page(
    c,
    { title: "Refused", csrf: c.var.session?.csrf, now: c.var.deps.now(), status: 403 },
    <>
      <h1>Refused: nothing was changed</h1>
      <p>
        The form was stale or came from another site (its CSRF token did not match this session). Go back, reload the
        page and try again.
      </p>
    </>,
  );
}

/** 403: the session's admin token has a role that may not do this; nothing was changed. */
function roleRefused(c: Context<ConsoleEnv>, verb: ConsoleNodeVerb) {
  const [method = "", path = ""] = VERB_ROUTE[verb].split(" ");
  const needed = roleNeeded(method, path);
  return page(
    c,
    { title: "Refused", csrf: c.var.session.csrf, now: c.var.deps.now(), status: 403 },
    <>
      <h1>Refused: nothing was changed</h1>
      <p>{roleRefusal(`${verb[0]!.toUpperCase()}${verb.slice(1)}`, c.var.session.role, needed)}.</p>
    </>,
  );
}

const staticFile = (body: string, type: string) => (c: Context) =>
  c.body(body, 200, { "content-type": type, "cache-control": "public, max-age=86400" });

export const consoleRoutes = new Hono<ConsoleEnv>()
  .use("/admin", headers)
  .use("/admin/*", headers)
  .get("/admin/static/style.css", staticFile(STYLE, "text/css; charset=utf-8"))
  .get("/admin/static/console.js", staticFile(SCRIPT, "text/javascript; charset=utf-8"))
  .get("/admin/login", async (c) => {
    const next = safeNext(c.req.query("next"));
    const secret = getCookie(c, SESSION_COOKIE);
    if (secret && (await findSession(c.var.deps.store.db, secret, c.var.deps.now()))) return c.redirect(next, 303);
    return loginPage(c, next);
  })
  .post("/admin/login", formLimit, async (c) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const next = safeNext(typeof form.next === "string" ? form.next : undefined);
    if (!sameOrigin(c)) return loginPage(c, next, "Refused: the form came from another site.");
    const token = typeof form.token === "string" ? form.token : "";
    const actor = token ? await loginActor(c, token) : undefined;
    await recordLogin(c.var.deps.store, c.var.deps.now(), actor);
    if (!actor)
      return loginPage(
        c,
        next,
        "That is not a valid admin token (llmgw_adm_…). Node, join and API keys cannot log in.",
      );
    const { secret } = await openSession(c.var.deps.store, actor.id, c.var.deps.now());
    setSessionCookie(c, secret);
    return c.redirect(next, 303);
  })
  .post("/admin/logout", formLimit, requireSession, async (c) => {
    if (!(await csrfOk(c))) return forbidden(c);
    await closeSession(c.var.deps.store, c.var.session.hash);
    clearSessionCookie(c);
    return c.redirect("/admin/login", 303);
  })
  .get("/admin", requireSession, overviewPage)
  .get("/admin/nodes", requireSession, nodesPage)
  .get("/admin/nodes/:id", requireSession, nodePage)
  .post("/admin/nodes/:id/:verb{cordon|uncordon|drain|forget}", formLimit, requireSession, async (c) => {
    if (!(await csrfOk(c))) return forbidden(c);
    const verb = c.req.param("verb") as ConsoleNodeVerb;
    if (!sessionMay(c.var.session, VERB_ROUTE[verb])) return roleRefused(c, verb);
    return nodeAction(c, c.req.param("id"), verb);
  })
  .get("/admin/nvlink", requireSession, nvlinkPage)
  .get("/admin/deployments", requireSession, deploymentsPage)
  .get("/admin/plan", requireSession, planPage)
  .get("/admin/usage", requireSession, usagePage)
  .get("/admin/audit", requireSession, auditPage)
  .all("/admin/*", requireSession, (c) =>
    page(
      c,
      { title: "Not found", csrf: c.var.session.csrf, now: c.var.deps.now(), status: 404 },
      <>
        <h1>No page here</h1>
        <p>
          Nothing at <code>{c.req.path}</code>. <a href="/admin">Overview</a>
        </p>
      </>,
    ),
  );
