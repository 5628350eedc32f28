/** @jsxImportSource hono/jsx */
// The node page's fabric parts: the NVLink domain with the node's eligibility for multi-node shards, IMEX, and the
// InfiniBand adapters and ports.
import { domainEligibility, nodeFabric } from "../../shared/fabric.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { Badge } from "./layout.js";
import { DomainKey, ImexBadge } from "./nodes.js";

/** The node's NVLink domain, whether it can take multi-node shards (and every reason not), and IMEX. */
export function DomainFacts(p: { inv: Inventory; state: string }) {
  const f = nodeFabric(p.inv.gpus);
  const e = domainEligibility(p.inv.gpus, p.inv.imex);
  const reasons = [...(p.state === "ready" ? [] : [`node ${p.state}`]), ...e.reasons];
  return (
    <dl class="facts">
      <dt>NVLink domain</dt>
      <dd>
        {f.domain ? (
          <a href={`/admin/nvlink#domain-${f.domain}`}>
            <DomainKey domain={f.domain} />
          </a>
        ) : f.domains.length ? (
          <span class="problems">GPUs report different domains: {f.domains.join(", ")}</span>
        ) : (
          <span class="muted">none (not part of a multi-node NVLink domain)</span>
        )}
      </dd>
      <dt>GPUs joined</dt>
      <dd>
        {f.joined} of {f.total}
        {f.health ? ` · fabric health ${f.health}` : ""}
        {f.degraded.length ? ` · degraded bandwidth on GPU ${f.degraded.join(", ")}` : ""}
      </dd>
      {f.domains.length ? (
        <>
          <dt>Multi-node NVLink shards</dt>
          <dd>
            {reasons.length ? (
              <>
                <Badge state="out" label="not eligible" />
                <ul class="reasons">
                  {reasons.map((r) => (
                    <li>{r}</li>
                  ))}
                </ul>
              </>
            ) : (
              <Badge
                state={e.degraded ? "degraded" : "in"}
                label={e.degraded ? "eligible, degraded (chosen last)" : "eligible"}
              />
            )}
          </dd>
        </>
      ) : null}
      <dt>IMEX</dt>
      <dd>
        {p.inv.imex.state === "absent" ? <span class="muted">absent</span> : <ImexBadge imex={p.inv.imex} />}
        {p.inv.imex.domainState ? ` · domain ${p.inv.imex.domainState}` : ""}
        {p.inv.imex.version ? ` · ${p.inv.imex.version}` : ""}
      </dd>
    </dl>
  );
}

/** InfiniBand adapters, one row per port, with the operator-named fabric each belongs to. */
export function HcaTable(p: { inv: Inventory }) {
  if (!p.inv.hcas.length)
    return (
      <p class="muted">No InfiniBand adapter: this node cannot host multi-node replicas outside an NVLink domain.</p>
    );
  const fabricOfHca = (name: string) => p.inv.fabrics.filter((f) => f.hcas.includes(name)).map((f) => f.fabric);
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">adapter</th>
          <th scope="col">NUMA</th>
          <th scope="col">IB fabric</th>
          <th scope="col">port</th>
          <th scope="col">state</th>
          <th scope="col">rate</th>
          <th scope="col">link layer</th>
          <th scope="col">GID prefix</th>
        </tr>
      </thead>
      <tbody>
        {p.inv.hcas.flatMap((h) =>
          (h.ports.length ? h.ports : [undefined]).map((port) => (
            <tr>
              <th scope="row" class="mono">
                {h.name}
                {h.hcaType ? <div class="muted">{h.hcaType}</div> : null}
              </th>
              <td>{h.numaNode ?? "—"}</td>
              <td>{fabricOfHca(h.name).join(", ") || <span class="muted">none named</span>}</td>
              <td>{port?.port ?? "—"}</td>
              <td>
                {port ? (
                  <Badge state={port.state} label={`${port.state}${port.physState ? ` (${port.physState})` : ""}`} />
                ) : (
                  <span class="muted">no ports</span>
                )}
                {port?.state === "INIT" ? <div>no subnet manager</div> : null}
              </td>
              <td>{port?.rateGbps !== undefined ? `${port.rateGbps} Gb/s` : "—"}</td>
              <td>{port?.linkLayer ?? "—"}</td>
              <td class="mono">{port?.gidPrefix ?? "—"}</td>
            </tr>
          )),
        )}
      </tbody>
    </table>
  );
}
