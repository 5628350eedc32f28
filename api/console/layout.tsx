/** @jsxImportSource hono/jsx */
// The console's page frame (top bar, nav, <main>, footer) and the small pieces every page uses.
import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import { SCRIPT } from "./script.js";
import { CSRF_FIELD } from "./session.js";
import { fingerprint, STYLE } from "./style.js";

export const STYLE_URL = `/admin/static/style.css?v=${fingerprint(STYLE)}`;
export const SCRIPT_URL = `/admin/static/console.js?v=${fingerprint(SCRIPT)}`;

/** Seconds between automatic refreshes of a page (script.ts). */
export const REFRESH_S = 10;

const NAV = [
  ["/admin", "Overview"],
  ["/admin/nodes", "Nodes"],
  ["/admin/nvlink", "NVLink"],
  ["/admin/deployments", "Deployments"],
  ["/admin/plan", "Plan"],
  ["/admin/usage", "Usage"],
  ["/admin/audit", "Audit"],
] as const;

export type PageOptions = {
  title: string;
  /** The time the page shows its data at (the app's clock). */
  now: number;
  /** The nav entry to mark as the current page. */
  section?: (typeof NAV)[number][0];
  /** The session's CSRF token: present on signed-in pages (the logout form needs it). */
  csrf?: string;
  refreshS?: number;
  status?: 200 | 401 | 403 | 404;
};

/** Renders a whole console page: doctype, head, top bar and nav, the body in <main>, and the refresh note. */
export function page(c: Context, o: PageOptions, body: Child) {
  const refresh = o.csrf ? (o.refreshS ?? REFRESH_S) : 0;
  const doc = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${o.title} · llmgw`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={STYLE_URL} />
        {refresh ? <script src={SCRIPT_URL} defer></script> : null}
      </head>
      <body data-refresh-s={refresh || undefined}>
        <header class="top">
          <a class="brand" href="/admin">
            llm<span>gw</span> console
          </a>
          {o.csrf ? (
            <>
              <nav aria-label="Console">
                <ul>
                  {NAV.map(([href, label]) => (
                    <li>
                      <a href={href} aria-current={o.section === href ? "page" : undefined}>
                        {label}
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
              <form method="post" action="/admin/logout">
                <CsrfField token={o.csrf} />
                <button type="submit">Log out</button>
              </form>
            </>
          ) : null}
        </header>
        <main id="main">{body}</main>
        {refresh ? (
          <footer>
            Shown at <span id="updated">{new Date(o.now).toISOString().slice(11, 19)}</span> UTC; refreshes every{" "}
            {refresh} s while the tab is visible (needs JavaScript; otherwise reload the page).
          </footer>
        ) : null}
      </body>
    </html>
  );
  return c.html(html`<!DOCTYPE html>${doc}`, o.status ?? 200);
}

/** The hidden CSRF field every console form carries. */
export function CsrfField(p: { token: string }) {
  return <input type="hidden" name={CSRF_FIELD} value={p.token} />;
}

/** A state written out, coloured by `data-state` (colour is never the only sign). */
export function Badge(p: { state: string; label?: string; title?: string }) {
  return (
    <span class="badge" data-state={p.state} title={p.title}>
      {p.label ?? p.state}
    </span>
  );
}

/** A list of "N × reason" lines, or a dash when there is none. */
export function CountedReasons(p: { items: readonly { count: number; reason: string }[] }) {
  if (!p.items.length) return <span class="muted">—</span>;
  return (
    <ul class="reasons">
      {p.items.map((x) => (
        <li>
          {x.count} × {x.reason}
        </li>
      ))}
    </ul>
  );
}

/** "2025-05-01 12:00:03 UTC": every absolute time the console shows is in UTC, and says so. */
export const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;

/** An absolute time in UTC, labelled. */
export function Utc(p: { at: number }) {
  return <time datetime={new Date(p.at).toISOString()}>{utc(p.at)}</time>;
}

/** "12 s ago" with the exact UTC time in its title; "never" for null. */
export function Ago(p: { at: number | null; now: number }) {
  if (p.at === null) return <span class="muted">never</span>;
  const s = Math.max(0, Math.round((p.now - p.at) / 1000));
  const text =
    s < 90
      ? `${s} s ago`
      : s < 5400
        ? `${Math.round(s / 60)} min ago`
        : s < 172800
          ? `${Math.round(s / 3600)} h ago`
          : `${Math.round(s / 86400)} d ago`;
  return (
    <time datetime={new Date(p.at).toISOString()} title={utc(p.at)}>
      {text}
    </time>
  );
}

/** MiB as GiB with one decimal. */
export const gib = (mib: number) => `${(mib / 1024).toFixed(1)} GiB`;

/** "a100-80g × 8, h100-80g × 2" for a class → count record. */
export const classList = (classes: Record<string, number>) =>
  Object.entries(classes)
    .map(([k, n]) => `${k} × ${n}`)
    .join(", ") || "no devices";

/** A shard's last failure in one line, its engine log's last lines behind a disclosure; nothing once it serves. */
export function ShardFailureNote(p: {
  state: string;
  failure: string | null;
  logTail?: readonly string[] | undefined;
}) {
  if (!p.failure || p.state === "ready") return null;
  return (
    <details class="failure">
      <summary>last failure: {p.failure}</summary>
      <pre class="log">{(p.logTail ?? []).join("\n") || "(its log was empty)"}</pre>
    </details>
  );
}
