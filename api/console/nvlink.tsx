/** @jsxImportSource hono/jsx */
// /admin/nvlink: each multi-node NVLink domain drawn as a rack, from the same view as GET /api/v1/nvlink: the NVLink
// Switch band on top, light running down the backplane, trays of GPU chips (joined: glow; not joined: pulse red;
// degraded bandwidth: amber), and beside each tray what keeps it out, then what warns without keeping it out (its
// IMEX peer list, shards off their transport). Every state is also in words (accessible names, visible labels); with
// prefers-reduced-motion nothing moves.
import type { Context } from "hono";
import type { NvlinkDomain, NvlinkGpu, NvlinkTray } from "../../shared/schemas/nvlink.js";
import { readNvlinkView } from "../views/nvlink.js";
import { Badge, page } from "./layout.js";
import { DomainKey } from "./nodes.js";
import type { ConsoleEnv } from "./session.js";

type ChipState = "joined" | "out" | "degraded";
const GLYPH: Record<ChipState, string> = { joined: "✓", out: "✕", degraded: "!" };
const TRAY_WORD = { in: "in", out: "out", degraded: "degraded" } as const;

/** A card's state on the rack of `domain`, and its accessible name ("GPU 2: not joined (fabric In Progress)"). */
export function chipOf(g: NvlinkGpu, domain: string): { state: ChipState; name: string } {
  if (!g.joined) return { state: "out", name: `GPU ${g.index}: not joined (${g.notJoined ?? "fabric not reported"})` };
  if (g.domain !== domain)
    return { state: "out", name: `GPU ${g.index}: not joined to this domain (it reports ${g.domain})` };
  if (g.degraded) {
    const h = g.fabric?.health;
    const why = [h?.summary ? `fabric health ${h.summary}` : "", h?.bandwidth ? `bandwidth ${h.bandwidth}` : ""]
      .filter(Boolean)
      .join(", ");
    return { state: "degraded", name: `GPU ${g.index}: joined, degraded bandwidth (${why})` };
  }
  return { state: "joined", name: `GPU ${g.index}: joined` };
}

/** A tray's state: in (eligible), degraded (eligible, placed on last) or out. */
export const trayState = (t: NvlinkTray): keyof typeof TRAY_WORD =>
  !t.eligible ? "out" : t.degraded ? "degraded" : "in";

/**
 * The warnings beside a tray that keep it in placement: its IMEX peer list against the domain's nodes, and each shard
 * on it whose NCCL left the transport it was placed for.
 */
export const trayNotes = (t: NvlinkTray): string[] => [
  ...(t.imexConfig?.warning ? [t.imexConfig.warning] : []),
  ...t.degradedShards.map((s) => `shard ${s.shardId} (replica ${s.replicaId}) transport degraded: ${s.reason}`),
];

function Tray(p: { tray: NvlinkTray; position: number; domain: string }) {
  const t = p.tray;
  const state = trayState(t);
  const number = t.trayIndex ?? p.position;
  const imexOk = t.imex.state === "ready" && t.imex.channels > 0;
  const notes = trayNotes(t);
  return (
    <li class="tray" data-state={state} data-node={t.node} aria-label={`Tray ${number} (${t.node}): ${state}`}>
      <div class="tray-face">
        <span class="tray-no" title={t.slotNumber !== null ? `slot ${t.slotNumber}` : undefined}>
          T{number}
        </span>
        <a class="tray-node" href={`/admin/nodes/${encodeURIComponent(t.node)}`}>
          {t.node}
        </a>
        <span class="tray-state">{TRAY_WORD[state]}</span>
        <ul class="chips" aria-label={`GPUs of ${t.node}`}>
          {t.gpus.map((g) => {
            const chip = chipOf(g, p.domain);
            return (
              <li>
                <span class="chip" role="img" data-state={chip.state} aria-label={chip.name} title={chip.name}>
                  {g.index}
                  <span aria-hidden="true">{GLYPH[chip.state]}</span>
                </span>
              </li>
            );
          })}
        </ul>
        <span class="tray-imex" data-state={imexOk ? "in" : "out"}>
          IMEX {t.imex.state}
          {t.imex.state === "ready" ? ` · ${t.imex.channels} ch` : ""}
        </span>
      </div>
      <div class="tray-why">
        {t.reasons.length ? (
          <ul aria-label={`What keeps ${t.node} out`}>
            {t.reasons.map((r) => (
              <li>{r}</li>
            ))}
          </ul>
        ) : t.warnings.length ? (
          <ul aria-label={`Why ${t.node} is degraded`}>
            {t.warnings.map((w) => (
              <li>{w} (placed on last)</li>
            ))}
          </ul>
        ) : (
          <span>
            {t.state}, {t.joined}/{t.total} joined{t.fabricHealth ? `, ${t.fabricHealth}` : ""}
          </span>
        )}
        {notes.length ? (
          <ul class="tray-notes" aria-label={`Warnings on ${t.node}`}>
            {notes.map((n) => (
              <li>{n}</li>
            ))}
          </ul>
        ) : null}
      </div>
    </li>
  );
}

function Rack(p: { domain: NvlinkDomain }) {
  const d = p.domain;
  const gpus = d.trays.flatMap((t) => t.gpus);
  const joined = gpus.filter((g) => chipOf(g, d.key).state !== "out").length;
  const band = joined === gpus.length ? "in" : joined === 0 ? "out" : "partial";
  const outTrays = new Set(d.trays.filter((t) => !t.eligible).map((t) => t.node));
  const stranded = (s: NvlinkDomain["shards"][number]) => outTrays.has(s.node) && s.state !== "stopped";
  return (
    <section class="domain" id={`domain-${d.key}`} aria-labelledby={`h-${d.key}`}>
      <header>
        <h2 id={`h-${d.key}`}>
          Domain <DomainKey domain={d.key} />
        </h2>
        <p class="muted">
          cluster <span class="mono">{d.clusterUuid}</span>, clique {d.cliqueId} · {d.eligibleTrays} of {d.trays.length}{" "}
          trays can take multi-node shards
          {d.degraded ? " · degraded bandwidth: placed on after healthy domains" : ""}
        </p>
      </header>
      {/* biome-ignore lint/a11y/useSemanticElements: a rack drawing, not a form: <fieldset> would be the wrong element */}
      <div class="rack" role="group" aria-label={`Rack of NVLink domain ${d.key}`}>
        <div class="switch-band" data-state={band}>
          <strong>NVLink Switch</strong>
          <span class="ports" aria-hidden="true">
            {Array.from({ length: 18 }, () => (
              <i></i>
            ))}
          </span>
          <span>
            {joined} of {gpus.length} GPUs joined
          </span>
        </div>
        <div class="rack-body">
          <div class="backplane" data-state={d.eligibleTrays ? "in" : "out"} aria-hidden="true">
            <span class="light"></span>
          </div>
          <ol class="trays" aria-label={`Trays of domain ${d.key}`}>
            {d.trays.map((t, i) => (
              <Tray tray={t} position={i + 1} domain={d.key} />
            ))}
          </ol>
        </div>
      </div>
      {d.shards.length ? (
        <table>
          <caption>Shards on this domain</caption>
          <thead>
            <tr>
              <th scope="col">replica</th>
              <th scope="col">deployment</th>
              <th scope="col">rank · node</th>
              <th scope="col">fabric</th>
              <th scope="col">state</th>
            </tr>
          </thead>
          <tbody>
            {d.shards.map((s) => (
              <tr data-state={stranded(s) ? "out" : undefined}>
                <th scope="row" class="mono">
                  {s.replicaId}
                </th>
                <td>{s.deployment}</td>
                <td>
                  {s.rank} · <a href={`/admin/nodes/${encodeURIComponent(s.node)}`}>{s.node}</a>
                </td>
                <td class="mono">{s.fabric}</td>
                <td>
                  <Badge state={s.state} />
                  {stranded(s) ? <div class="problems">still on a tray that is out</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

/** GET /admin/nvlink. */
export async function nvlinkPage(c: Context<ConsoleEnv>) {
  const { store, now: clock, settings } = c.var.deps;
  const now = clock();
  const view = await readNvlinkView(store.db, now, settings.nodeLostAfterS);
  return page(
    c,
    { title: "NVLink", section: "/admin/nvlink", csrf: c.var.session.csrf, now },
    <>
      <h1>NVLink domains</h1>
      <p class="muted">Every multi-node NVLink domain as a rack: the same view as GET /api/v1/nvlink.</p>
      <div class="legend" role="note" aria-label="Legend">
        <span class="chip" data-state="joined">
          ✓ joined
        </span>
        <span class="chip" data-state="out">
          ✕ not joined
        </span>
        <span class="chip" data-state="degraded">
          ! degraded bandwidth
        </span>
        <span>Beside each tray: what keeps it out of multi-node placement; "!" lines warn without keeping it out.</span>
      </div>
      {view.domains.length ? (
        <div class="domains">
          {view.domains.map((d) => (
            <Rack domain={d} />
          ))}
        </div>
      ) : (
        <p class="muted">No node reports a multi-node NVLink domain.</p>
      )}
      {view.standalone.length ? (
        <section aria-labelledby="h-standalone">
          <h2 id="h-standalone">NVLink on one machine only</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">node</th>
                <th scope="col">state</th>
                <th scope="col">GPUs</th>
                <th scope="col">why no domain</th>
              </tr>
            </thead>
            <tbody>
              {view.standalone.map((s) => (
                <tr>
                  <th scope="row">
                    <a href={`/admin/nodes/${encodeURIComponent(s.node)}`}>{s.node}</a>
                  </th>
                  <td>
                    <Badge state={s.state} />
                  </td>
                  <td>{s.gpus.length}</td>
                  <td>{s.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
      {view.noFabric.length ? (
        <p class="muted">
          No NVLink fabric reported by:{" "}
          {view.noFabric.map((id, i) => (
            <>
              {i ? ", " : ""}
              <a href={`/admin/nodes/${encodeURIComponent(id)}`}>{id}</a>
            </>
          ))}
          .
        </p>
      ) : null}
    </>,
  );
}
