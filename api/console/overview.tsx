import type { Context } from "hono";
import { NodeState } from "../../shared/schemas/node.js";
import { listEvents } from "../db/events.js";
import { listNodes, readInventory } from "../db/nodes.js";
import { nodeState } from "../nodes/state.js";
import { readCapacity } from "../views/capacity.js";
import { listDeploymentViews } from "../views/deployments.js";
import { readNvlinkView } from "../views/nvlink.js";
import { listReplicaViews } from "../views/replicas.js";
import { Attention, fleetProblems } from "./attention.js";
import { Ago, Badge, page, Utc } from "./layout.js";
import { ClassTable } from "./plan.js";
import type { ConsoleEnv } from "./session.js";

const DEPLOYMENT_PHASES = ["Ready", "Starting", "Pending"] as const;
const REPLICA_STATES = ["ready", "starting", "failed"] as const;

/** Counts of `items` by `key`, in the order of `keys`. */
const countBy = <T,>(items: T[], keys: readonly string[], key: (t: T) => string) =>
  keys.map((k) => [k, items.filter((i) => key(i) === k).length] as const);

/** Cards of counts, each linking to where the items are listed. */
function Counts(p: { label: string; counts: (readonly [string, number])[]; href: (k: string) => string }) {
  return (
    <ul class="cards" aria-label={p.label}>
      {p.counts.map(([k, n]) => (
        <li class="card">
          <a href={p.href(k)} aria-label={`${n} ${k}`}>
            <div class="big">{n}</div>
            <Badge state={k} />
          </a>
        </li>
      ))}
    </ul>
  );
}

/** GET /admin. */
export async function overviewPage(c: Context<ConsoleEnv>) {
  const deps = c.var.deps;
  const db = deps.store.db;
  const now = deps.now();
  const lostAfterS = deps.settings.nodeLostAfterS;
  const [nodeRows, events, deploymentList, replicaList, capacity, nvlink] = await Promise.all([
    listNodes(db),
    listEvents(db, { limit: 15 }),
    listDeploymentViews(db),
    listReplicaViews(db),
    readCapacity(deps, now),
    readNvlinkView(db, now, lostAfterS),
  ]);
  const states = nodeRows.map((r) => nodeState(r, now, lostAfterS));
  const problems = fleetProblems({
    nodes: nodeRows.map((r, i) => ({ id: r.id, state: states[i]!, lastSeenAt: r.lastSeenAt, inv: readInventory(r) })),
    nvlink,
    deployments: deploymentList,
    replicas: replicaList,
    now,
    lateAfterS: Math.min(2 * deps.settings.heartbeatIntervalS, lostAfterS),
  });
  const trays = nvlink.domains.flatMap((d) => d.trays);
  const outTrays = trays.filter((t) => !t.eligible).length;
  const pending = deploymentList.flatMap((d) => d.status.pending.map((p) => ({ deployment: d.name, ...p })));
  return page(
    c,
    { title: "Overview", section: "/admin", csrf: c.var.session.csrf, now },
    <>
      <h1>Overview</h1>
      <Attention problems={problems} />
      <section aria-labelledby="h-nodes">
        <h2 id="h-nodes">Nodes ({nodeRows.length})</h2>
        <Counts
          label="Nodes by state"
          counts={countBy(states, NodeState.options, (s) => s)}
          href={(k) => `/admin/nodes?state=${k}`}
        />
        {trays.length ? (
          <p class={outTrays ? "problems" : "muted"}>
            <a href="/admin/nvlink">NVLink trays</a>: {trays.length - outTrays} of {trays.length} in their domain
            {outTrays ? `, ${outTrays} out (whatever their state above)` : ""}.
          </p>
        ) : null}
      </section>
      <section aria-labelledby="h-devices">
        <h2 id="h-devices">Devices</h2>
        <ClassTable classes={capacity.classes} />
      </section>
      <div class="grid-2">
        <section aria-labelledby="h-deployments">
          <h2 id="h-deployments">Deployments ({deploymentList.length})</h2>
          <Counts
            label="Deployments by phase"
            counts={countBy(deploymentList, DEPLOYMENT_PHASES, (d) => d.status.phase)}
            href={() => "/admin/deployments"}
          />
        </section>
        <section aria-labelledby="h-replicas">
          <h2 id="h-replicas">Replicas ({replicaList.length})</h2>
          <Counts
            label="Replicas by state"
            counts={countBy(replicaList, REPLICA_STATES, (r) => r.state)}
            href={() => "/admin/deployments#replicas"}
          />
        </section>
      </div>
      <section aria-labelledby="h-pending">
        <h2 id="h-pending">Why replicas are pending</h2>
        {pending.length ? (
          <ul class="reasons">
            {pending.map((p) => (
              <li>
                <a href="/admin/deployments">{p.deployment}</a>: {p.count} × {p.reason}
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">Nothing pending: every desired replica is placed.</p>
        )}
      </section>
      <section aria-labelledby="h-events">
        <h2 id="h-events">Recent events</h2>
        <EventTable events={events} now={now} />
      </section>
    </>,
  );
}

/** Events, newest first. */
export function EventTable(p: { events: Awaited<ReturnType<typeof listEvents>>; now: number }) {
  if (!p.events.length) return <p class="muted">No events yet.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">when (UTC)</th>
          <th scope="col">type</th>
          <th scope="col">node</th>
          <th scope="col">what happened</th>
        </tr>
      </thead>
      <tbody>
        {p.events.map((e) => (
          <tr>
            <td class="when">
              <Utc at={e.at} /> · <Ago at={e.at} now={p.now} />
            </td>
            <td class="mono">{e.type}</td>
            <td>
              {e.nodeId ? (
                <a href={`/admin/nodes/${encodeURIComponent(e.nodeId)}`}>{e.nodeId}</a>
              ) : (
                <span class="muted">—</span>
              )}
            </td>
            <td>{e.message}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
