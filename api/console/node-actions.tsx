/** @jsxImportSource hono/jsx */
// POST /admin/nodes/:id/<verb>: cordon, drain and forget first answer a confirmation page that says what the action
// does and which replicas and shards are on the node; only its second submit (`confirm=yes`, the same CSRF token)
// acts. Uncordon acts at once: it only lets placement use the node again. Works without JavaScript.
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { auditEvent } from "../audit.js";
import { bumpGeneration } from "../db/cluster.js";
import { insertEvents } from "../db/events.js";
import { deleteNode, findNode, setAdminState } from "../db/nodes.js";
import { replicas, shards } from "../db/schema.js";
import { placeSoon } from "../placement/trigger.js";
import { NODE_ACTIONS, type NodeAction } from "../views/nodes.js";
import { replicaViews } from "../views/replicas.js";
import { Badge, CsrfField, page } from "./layout.js";
import { type ConsoleEnv, sessionActor } from "./session.js";

export type ConsoleNodeVerb = NodeAction | "forget";

/** The API route each console action is, so that it needs the same role (api/roles.ts). */
export const VERB_ROUTE: Record<ConsoleNodeVerb, string> = {
  cordon: "POST /api/v1/nodes/{id}/cordon",
  uncordon: "POST /api/v1/nodes/{id}/uncordon",
  drain: "POST /api/v1/nodes/{id}/drain",
  forget: "DELETE /api/v1/nodes/{id}",
};

/** What each action does to what runs on the node, said before it is confirmed. */
const CONSEQUENCE: Record<Exclude<ConsoleNodeVerb, "uncordon">, { label: string; moves: string; none: string }> = {
  cordon: {
    label: "Cordon",
    moves: "Nothing new is placed on it. These shards keep running where they are:",
    none: "Nothing new is placed on it. No shards are on it, so nothing moves.",
  },
  drain: {
    label: "Drain",
    moves: "These replicas move to other nodes, one at a time; then the node stays cordoned:",
    none: "No shards are on it, so nothing moves; it stays cordoned.",
  },
  forget: {
    label: "Forget",
    moves:
      "Its row, devices and token go; its agent must register again with a join token. These shards lose their node and their replicas are placed again:",
    none: "Its row, devices and token go; its agent must register again with a join token. No shards are on it.",
  },
};

const nodeUrl = (id: string) => `/admin/nodes/${encodeURIComponent(id)}`;

/** The confirmation page of `verb` on node `id`: what it does, what runs there, and the form that does it. */
async function confirmPage(c: Context<ConsoleEnv>, id: string, verb: keyof typeof CONSEQUENCE) {
  const db = c.var.deps.store.db;
  const rows = await db
    .select()
    .from(replicas)
    .innerJoin(shards, eq(shards.replicaId, replicas.id))
    .where(eq(shards.nodeId, id));
  const views = await replicaViews(
    db,
    [...new Map(rows.map((r) => [r.replicas.id, r.replicas])).values()].sort((a, b) => a.seq - b.seq),
  );
  const here = views.flatMap((r) => r.shards.filter((s) => s.nodeId === id).map((s) => ({ r, s })));
  const what = CONSEQUENCE[verb];
  const csrf = c.var.session.csrf;
  return page(
    c,
    { title: `${what.label} ${id}?`, section: "/admin/nodes", csrf, now: c.var.deps.now(), refreshS: 0 },
    <>
      <p class="muted">
        <a href="/admin/nodes">Nodes</a> / <a href={nodeUrl(id)}>{id}</a> /
      </p>
      <h1>
        {what.label} {id}?
      </h1>
      <p>{here.length ? what.moves : what.none}</p>
      {here.length ? (
        <ul class="reasons" aria-label={`On ${id}`}>
          {here.map(({ r, s }) => (
            <li>
              replica <span class="mono">{r.id}</span> of {r.deployment}: shard <span class="mono">{s.shardId}</span>{" "}
              rank {s.rank} on GPU {s.devices.join(", ")} <Badge state={s.state} />
              {r.shards.some((o) => o.nodeId !== id)
                ? ` (the replica also has shards on ${[...new Set(r.shards.filter((o) => o.nodeId !== id).map((o) => o.nodeId))].join(", ")})`
                : ""}
            </li>
          ))}
        </ul>
      ) : null}
      <div class="actions">
        <form method="post" action={`${nodeUrl(id)}/${verb}`}>
          <CsrfField token={csrf} />
          <input type="hidden" name="confirm" value="yes" />
          <button type="submit" class="danger">
            {what.label} {id}
          </button>
        </form>
        <a class="button" href={nodeUrl(id)}>
          Cancel
        </a>
      </div>
    </>,
  );
}

/** Runs a node action the session asked for (its CSRF token already checked), or asks first. */
export async function nodeAction(c: Context<ConsoleEnv>, id: string, verb: ConsoleNodeVerb) {
  const { store, now } = c.var.deps;
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  if (!(await findNode(store.db, id))) return c.redirect(nodeUrl(id), 303);
  if (verb !== "uncordon" && form.confirm !== "yes") return confirmPage(c, id, verb);
  if (verb === "forget") {
    await store.write(async (tx) => {
      if (!(await deleteNode(tx, id))) return;
      const by = sessionActor(c.var.session);
      await insertEvents(tx, now(), [
        auditEvent("node_deleted", { kind: "node", name: id }, by, `${id} was deleted`, {}, id),
      ]);
      await bumpGeneration(tx);
    });
    placeSoon(c.var.deps, (work) => c.executionCtx.waitUntil(work), "a console action");
    return c.redirect(`/admin/nodes?forgot=${encodeURIComponent(id)}`, 303);
  }
  const { adminState, event } = NODE_ACTIONS[verb];
  const row = await store.write((tx) => setAdminState(tx, id, adminState, event, now(), sessionActor(c.var.session)));
  if (!row) return c.redirect(nodeUrl(id), 303);
  placeSoon(c.var.deps, (work) => c.executionCtx.waitUntil(work), "a console action");
  return c.redirect(`${nodeUrl(id)}?done=${verb}`, 303);
}
