import type { Context } from "hono";
import { policyOf } from "../placement/serving.js";
import { listDeploymentViews } from "../views/deployments.js";
import { listReplicaViews } from "../views/replicas.js";
import { Ago, Badge, CountedReasons, page, ShardFailureNote } from "./layout.js";
import type { ConsoleEnv } from "./session.js";
import { DegradedNote } from "./transport.js";

/** GET /admin/deployments. */
export async function deploymentsPage(c: Context<ConsoleEnv>) {
  const db = c.var.deps.store.db;
  const now = c.var.deps.now();
  const [list, reps] = await Promise.all([listDeploymentViews(db), listReplicaViews(db)]);
  const policy = new Map(list.map((d) => [d.name, policyOf(d.spec)]));
  return page(
    c,
    { title: "Deployments", section: "/admin/deployments", csrf: c.var.session.csrf, now },
    <>
      <h1>Deployments</h1>
      {list.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">deployment</th>
              <th scope="col">model</th>
              <th scope="col">pool</th>
              <th scope="col" class="num">
                desired
              </th>
              <th scope="col" class="num">
                placed
              </th>
              <th scope="col" class="num">
                ready
              </th>
              <th scope="col">phase</th>
              <th scope="col">why pending</th>
            </tr>
          </thead>
          <tbody>
            {list.map((d) => (
              <tr>
                <th scope="row">{d.name}</th>
                <td>{d.spec.model}</td>
                <td>{d.spec.pool ?? "default"}</td>
                <td class="num">{d.status.desired}</td>
                <td class="num">{d.status.placed}</td>
                <td class="num">{d.status.ready}</td>
                <td>
                  <Badge state={d.status.phase} />
                </td>
                <td>
                  <CountedReasons items={d.status.pending} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">
          No deployments. Declare one with <code>{"PUT /api/v1/deployments/<name>"}</code> (or Terraform).
        </p>
      )}
      <h2 id="replicas">Replicas</h2>
      {reps.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">replica</th>
              <th scope="col">deployment / profile</th>
              <th scope="col">state</th>
              <th scope="col">endpoint</th>
              <th scope="col">shards: node, rank, devices, fabric, state</th>
              <th scope="col">created</th>
            </tr>
          </thead>
          <tbody>
            {reps.map((r) => (
              <tr id={`replica-${r.id}`}>
                <th scope="row" class="mono">
                  {r.id}
                </th>
                <td>
                  {r.deployment} / {r.profile}
                </td>
                <td>
                  <Badge state={r.state} />
                  {r.state === "degraded" ? (
                    <DegradedNote shards={r.shards} policy={policy.get(r.deployment) ?? policyOf(undefined)} />
                  ) : null}
                </td>
                <td class="mono">{r.endpoint ?? <span class="muted">—</span>}</td>
                <td>
                  <ul class="reasons">
                    {r.shards.map((s) => (
                      <li>
                        <a href={`/admin/nodes/${encodeURIComponent(s.nodeId)}`}>{s.nodeId}</a> rank {s.rank} · GPU{" "}
                        {s.devices.join(", ")} · <span class="mono">{s.fabric}</span> · <Badge state={s.state} />
                        {s.message ? ` ${s.message}` : ""}
                        <ShardFailureNote state={s.state} failure={s.failure} logTail={s.lastFailure?.logTail} />
                      </li>
                    ))}
                  </ul>
                </td>
                <td>
                  <Ago at={r.createdAt} now={now} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">No replicas placed.</p>
      )}
    </>,
  );
}
