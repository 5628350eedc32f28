/** @jsxImportSource hono/jsx */
// /admin/nodes: every node with its state, devices by class, NVLink fabric, IMEX and InfiniBand ports.
import type { Context } from "hono";
import { nodeFabric } from "../../shared/fabric.js";
import { NodeState } from "../../shared/schemas/node.js";
import { classCounts, listNodes, readInventory } from "../db/nodes.js";
import { nodeSummary } from "../views/nodes.js";
import { Ago, Badge, classList, page } from "./layout.js";
import type { ConsoleEnv } from "./session.js";

/** A domain key shortened for tables (`00000001….2`), the whole key in its title. */
export function DomainKey(p: { domain: string }) {
  const [uuid = "", clique = ""] = p.domain.split(/\.(?=[^.]*$)/);
  return (
    <span class="mono" title={p.domain}>
      {uuid.slice(0, 8)}….{clique}
    </span>
  );
}

/** The IMEX state as a badge with its channel count. */
export function ImexBadge(p: { imex: { state: string; channels: number } }) {
  const label =
    p.imex.state === "ready"
      ? `${p.imex.state}, ${p.imex.channels} channel${p.imex.channels === 1 ? "" : "s"}`
      : p.imex.state;
  return (
    <Badge
      state={p.imex.state === "ready" ? (p.imex.channels ? "ready" : "warn") : p.imex.state}
      label={`IMEX ${label}`}
    />
  );
}

/** GET /admin/nodes[?state=…]. */
export async function nodesPage(c: Context<ConsoleEnv>) {
  const { store, now: clock, settings } = c.var.deps;
  const now = clock();
  const wanted = NodeState.safeParse(c.req.query("state")).data;
  const forgot = c.req.query("forgot");
  const [rows, classes] = await Promise.all([listNodes(store.db), classCounts(store.db)]);
  const list = rows
    .map((row) => ({
      summary: nodeSummary(row, classes.get(row.id) ?? {}, now, settings.nodeLostAfterS),
      inv: readInventory(row),
    }))
    .filter((n) => !wanted || n.summary.state === wanted);
  return page(
    c,
    { title: "Nodes", section: "/admin/nodes", csrf: c.var.session.csrf, now },
    <>
      <h1>Nodes{wanted ? ` (${wanted})` : ""}</h1>
      {forgot ? (
        <p class="notice done" role="status">
          {forgot} forgotten: its agent must register again with a join token.
        </p>
      ) : null}
      <p class="muted">
        {wanted ? (
          <>
            Only {wanted} nodes. <a href="/admin/nodes">All nodes</a>
          </>
        ) : (
          "Every registered node, by id."
        )}
      </p>
      {list.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">node</th>
              <th scope="col">state</th>
              <th scope="col">pool</th>
              <th scope="col">devices</th>
              <th scope="col">NVLink</th>
              <th scope="col">IMEX</th>
              <th scope="col">IB ports</th>
              <th scope="col">last seen</th>
            </tr>
          </thead>
          <tbody>
            {list.map(({ summary: n, inv }) => {
              const f = nodeFabric(inv.gpus);
              const ports = inv.hcas.flatMap((h) => h.ports);
              const active = ports.filter((p) => p.state === "ACTIVE").length;
              return (
                <tr>
                  <th scope="row">
                    <a href={`/admin/nodes/${encodeURIComponent(n.id)}`}>{n.id}</a>
                    <div class="muted">{n.hostname}</div>
                  </th>
                  <td>
                    <Badge state={n.state} />
                  </td>
                  <td>{n.pool}</td>
                  <td class="mono">{classList(n.classes)}</td>
                  <td>
                    {f.domains.length ? (
                      <>
                        <Badge
                          state={f.joined === f.total ? (f.degraded.length ? "degraded" : "joined") : "out"}
                          label={`${f.joined}/${f.total} joined`}
                        />{" "}
                        {f.domain ? <DomainKey domain={f.domain} /> : <span class="problems">mixed domains</span>}
                      </>
                    ) : (
                      <span class="muted">no multi-node domain</span>
                    )}
                  </td>
                  <td>
                    {inv.imex.state === "absent" ? <span class="muted">absent</span> : <ImexBadge imex={inv.imex} />}
                  </td>
                  <td>{ports.length ? `${active} of ${ports.length} active` : <span class="muted">no HCA</span>}</td>
                  <td>
                    <Ago at={n.lastSeenAt} now={now} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : (
        <p class="muted">
          No nodes{wanted ? ` in state ${wanted}` : ""}. Agents register with a join token (POST /api/v1/join-tokens).
        </p>
      )}
    </>,
  );
}
