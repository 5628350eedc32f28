/** @jsxImportSource hono/jsx */
// /admin/nodes/:id: one node's GPUs, NVLink matrix, NUMA and adapters, MIG instances, domain and IMEX, HCAs, shards
// (with the transport each one's NCCL uses), events, and the cordon / uncordon / drain buttons (POST forms with the session's CSRF token).
import { eq, inArray } from "drizzle-orm";
import type { Context } from "hono";
import { listEvents } from "../db/events.js";
import { findNode } from "../db/nodes.js";
import { replicas, shards } from "../db/schema.js";
import { NODE_ACTIONS, type NodeAction, nodeDetail } from "../views/nodes.js";
import { replicaViews } from "../views/replicas.js";
import { Ago, Badge, CsrfField, classList, page, ShardFailureNote } from "./layout.js";
import { VERB_ROUTE } from "./node-actions.js";
import { DomainFacts, HcaTable } from "./node-fabric.js";
import { GpuTable, MigTable, NvlinkMatrix } from "./node-gpus.js";
import { EventTable } from "./overview.js";
import { type ConsoleEnv, sessionMay } from "./session.js";
import { TransportCell } from "./transport.js";

type NodeView = Awaited<ReturnType<typeof nodeDetail>>;
type Replica = Awaited<ReturnType<typeof replicaViews>>[number];

function ShardTable(p: { node: NodeView; replicas: Replica[] }) {
  const placed = p.replicas.flatMap((r) => r.shards.filter((s) => s.nodeId === p.node.id).map((s) => ({ r, s })));
  const reportedOnly = p.node.shards.filter((x) => !placed.some(({ s }) => s.shardId === x.shardId));
  if (!placed.length && !reportedOnly.length) return <p class="muted">No shards on this node.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">shard</th>
          <th scope="col">deployment / replica</th>
          <th scope="col">rank</th>
          <th scope="col">devices</th>
          <th scope="col">port</th>
          <th scope="col">fabric</th>
          <th scope="col">transport</th>
          <th scope="col">state</th>
        </tr>
      </thead>
      <tbody>
        {placed.map(({ r, s }) => (
          <tr>
            <th scope="row" class="mono">
              {s.shardId}
            </th>
            <td>
              {r.deployment} / <span class="mono">{r.id}</span>
            </td>
            <td>{s.rank}</td>
            <td class="mono">{s.devices.join(", ")}</td>
            <td>{s.httpPort}</td>
            <td class="mono">{s.fabric}</td>
            <td>
              <TransportCell transport={s.transport} />
            </td>
            <td>
              <Badge state={s.state} />
              {s.message ? <div>{s.message}</div> : null}
              <ShardFailureNote state={s.state} failure={s.failure} logTail={s.lastFailure?.logTail} />
            </td>
          </tr>
        ))}
        {reportedOnly.map((x) => (
          <tr>
            <th scope="row" class="mono">
              {x.shardId}
            </th>
            <td colspan={5} class="muted">
              no longer placed here{x.replicaId ? ` (was replica ${x.replicaId})` : ""}
            </td>
            <td>
              <TransportCell transport={x.transport} />
            </td>
            <td>
              <Badge state={x.state} />
              {x.message ? <div>{x.message}</div> : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** GET /admin/nodes/:id. */
export async function nodePage(c: Context<ConsoleEnv>) {
  const { store, now: clock, settings } = c.var.deps;
  const id = c.req.param("id") ?? "";
  const now = clock();
  const row = await findNode(store.db, id);
  const csrf = c.var.session.csrf;
  if (!row) {
    return page(
      c,
      { title: "No such node", section: "/admin/nodes", csrf, now, status: 404 },
      <>
        <h1>No node {id}</h1>
        <p>
          <a href="/admin/nodes">All nodes</a>
        </p>
      </>,
    );
  }
  const held = await store.db.selectDistinct({ id: shards.replicaId }).from(shards).where(eq(shards.nodeId, id));
  const [node, events, replicaRows] = await Promise.all([
    nodeDetail(store.db, row, now, settings.nodeLostAfterS),
    listEvents(store.db, { nodeId: id, limit: 10 }),
    held.length
      ? store.db
          .select()
          .from(replicas)
          .where(
            inArray(
              replicas.id,
              held.map((h) => h.id),
            ),
          )
      : Promise.resolve([]),
  ]);
  const inv = node.inventory;
  const done = c.req.query("done") as NodeAction | undefined;
  return page(
    c,
    { title: `Node ${id}`, section: "/admin/nodes", csrf, now },
    <>
      <p class="muted">
        <a href="/admin/nodes">Nodes</a> /
      </p>
      <h1>
        {node.id} <Badge state={node.state} />
      </h1>
      {done && done in NODE_ACTIONS ? (
        <p class="notice done" role="status">
          {node.id} {NODE_ACTIONS[done].done}.
        </p>
      ) : null}
      <div class="actions">
        {(Object.keys(NODE_ACTIONS) as NodeAction[])
          .filter((verb) => sessionMay(c.var.session, VERB_ROUTE[verb]))
          .map((verb) => (
            <form method="post" action={`/admin/nodes/${encodeURIComponent(id)}/${verb}`}>
              <CsrfField token={csrf} />
              <button
                type="submit"
                class={verb === "uncordon" ? "" : "danger"}
                disabled={!(NODE_ACTIONS[verb].from as readonly string[]).includes(node.adminState)}
              >
                {NODE_ACTIONS[verb].label}
              </button>
            </form>
          ))}
        {sessionMay(c.var.session, VERB_ROUTE.forget) ? (
          <form method="post" action={`/admin/nodes/${encodeURIComponent(id)}/forget`}>
            <CsrfField token={csrf} />
            <button type="submit" class="danger">
              Forget
            </button>
          </form>
        ) : null}
      </div>
      {sessionMay(c.var.session, VERB_ROUTE.cordon) ? (
        <p class="muted">Cordon, drain and forget ask first, and say which replicas are on the node.</p>
      ) : (
        <p class="muted">This token has the {c.var.session.role} role: it can look, not change.</p>
      )}
      <dl class="facts">
        <dt>Hostname</dt>
        <dd>{node.hostname}</dd>
        <dt>Management address</dt>
        <dd class="mono">
          {node.mgmtAddr}
          {node.mgmtInterface ? ` (${node.mgmtInterface})` : ""}
        </dd>
        <dt>Pool and labels</dt>
        <dd>
          {node.pool} ·{" "}
          {Object.entries(node.labels)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ") || "no labels"}
        </dd>
        <dt>Devices</dt>
        <dd class="mono">{classList(node.classes)}</dd>
        <dt>Agent</dt>
        <dd>
          {node.agentVersion} · GPUs from {inv.gpuSource}
          {inv.host.nvidiaDriver ? ` · driver ${inv.host.nvidiaDriver}` : ""}
        </dd>
        <dt>Last heard from</dt>
        <dd>
          <Ago at={node.lastSeenAt} now={now} /> (heartbeat <Ago at={node.lastHeartbeatAt} now={now} />)
        </dd>
      </dl>
      {inv.errors.length ? (
        <div class="notice error">
          Discovery errors:
          <ul class="reasons">
            {inv.errors.map((e) => (
              <li>
                {e.source}: {e.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <h2>GPUs</h2>
      {inv.gpus.length ? <GpuTable gpus={inv.gpus} /> : <p class="muted">No GPUs reported.</p>}
      <h2>NVLink between this node's GPUs</h2>
      <NvlinkMatrix gpus={inv.gpus} />
      <h2>MIG instances</h2>
      <MigTable gpus={inv.gpus} />
      <h2>NVLink domain and IMEX</h2>
      <DomainFacts inv={inv} state={node.state} />
      <h2>InfiniBand adapters and ports</h2>
      <HcaTable inv={inv} />
      <h2>Shards on this node</h2>
      <ShardTable node={node} replicas={await replicaViews(store.db, replicaRows)} />
      <h2>Recent events</h2>
      <EventTable events={events} now={now} />
    </>,
  );
}
