/** @jsxImportSource hono/jsx */
// /admin/login: the form that trades an admin token for a console session.
import type { Context } from "hono";
import { page } from "./layout.js";
import type { ConsoleEnv } from "./session.js";

/** The login form; `error` when the last attempt failed (401 then). */
export function loginPage(c: Context<ConsoleEnv>, next: string, error?: string) {
  return page(
    c,
    { title: "Log in", now: c.var.deps.now(), status: error ? 401 : 200 },
    <form class="login" method="post" action="/admin/login">
      <h1>Log in</h1>
      <p class="muted">
        With an admin token (<code>llmgw_adm_…</code>): printed at the server's first start, LLMGW_ADMIN_TOKEN, or made
        with POST /api/v1/tokens.
      </p>
      {error ? (
        <p class="notice error" role="alert">
          {error}
        </p>
      ) : null}
      <input type="hidden" name="next" value={next} />
      <label for="token">Admin token</label>
      <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
      <button class="primary" type="submit">
        Log in
      </button>
    </form>,
  );
}
