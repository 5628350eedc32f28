/** @jsxImportSource hono/jsx */
// GET /admin/audit: the audit trail — who changed what and when (UTC), with the spec's diff — newest first, filtered
// like GET /api/v1/events (?actor=, ?kind=), 200 a page.
import type { Context } from "hono";
import type { SpecChange } from "../audit.js";
import { listEvents } from "../db/events.js";
import { page, utc } from "./layout.js";
import type { ConsoleEnv } from "./session.js";

const KINDS = ["model", "deployment", "api_key", "node", "admin_token", "join_token", "session"];

/** The diff of a declaration, one changed key a line. */
function Diff({ diff }: { diff: unknown }) {
  if (!Array.isArray(diff) || !diff.length) return null;
  return (
    <ul class="reasons">
      {(diff as SpecChange[]).map((d) => (
        <li>
          <code>{d.key}</code>: <span class="mono">{d.before ?? "(none)"}</span> →{" "}
          <span class="mono">{d.after ?? "(none)"}</span>
        </li>
      ))}
    </ul>
  );
}

/** GET /admin/audit. */
export async function auditPage(c: Context<ConsoleEnv>) {
  const now = c.var.deps.now();
  const actor = c.req.query("actor")?.slice(0, 256) || undefined;
  const kind = c.req.query("kind")?.slice(0, 64) || undefined;
  const items = await listEvents(c.var.deps.store.db, { audit: true, actor, kind, limit: 200 });
  return page(
    c,
    { title: "Audit", section: "/admin/audit", csrf: c.var.session.csrf, now },
    <>
      <h1>Audit</h1>
      <form method="get" action="/admin/audit" class="actions">
        <label>
          actor <input name="actor" value={actor ?? ""} placeholder="token id or name" />
        </label>
        <label>
          kind{" "}
          <select name="kind">
            <option value="">any</option>
            {KINDS.map((k) => (
              <option value={k} selected={k === kind}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      {items.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">when (UTC)</th>
              <th scope="col">who</th>
              <th scope="col">what</th>
              <th scope="col">kind</th>
              <th scope="col">name</th>
              <th scope="col">change</th>
            </tr>
          </thead>
          <tbody>
            {items.map((e) => (
              <tr>
                <td class="mono">{utc(e.at)}</td>
                <td>
                  {e.actor ? (
                    <>
                      {e.actor.name ?? e.actor.id} <span class="muted mono">{e.actor.id}</span>{" "}
                      <span class="muted">
                        {e.actor.role}
                        {e.data?.via === "console" ? ", console" : ""}
                      </span>
                    </>
                  ) : (
                    <span class="muted">unknown</span>
                  )}
                </td>
                <td class="mono">{e.type}</td>
                <td>{e.kind}</td>
                <td class="mono">{e.name}</td>
                <td>
                  {e.message}
                  <Diff diff={e.data?.diff} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">No changes recorded{actor || kind ? " that match" : ""}.</p>
      )}
    </>,
  );
}
