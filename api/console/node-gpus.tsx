/** @jsxImportSource hono/jsx */
// The node page's GPU parts: each card (class, memory, NUMA node, nearest adapter, fabric, health), the GPU-by-GPU
// NVLink matrix, and MIG instances.
import { domainKey, notJoinedReason } from "../../shared/fabric.js";
import type { Gpu } from "../../shared/schemas/gpu.js";
import { Badge, gib } from "./layout.js";

/** A GPU's NVLink fabric as a state word and the reason it is not joined ("none": no multi-node fabric to join). */
function fabricOf(g: Gpu): { state: "joined" | "out" | "degraded" | "none"; why?: string } {
  if (!g.fabric) return { state: "none", why: "not reported" };
  const why = notJoinedReason(g.fabric);
  if (why && g.fabric.state === "Completed" && g.fabric.status === "Success" && !domainKey(g.fabric))
    return { state: "none", why: "no multi-node domain (single-machine NVSwitch)" };
  if (why) return { state: "out", why };
  const h = g.fabric.health;
  if (h?.bandwidth === "Degraded" || h?.summary === "Limited Capacity")
    return { state: "degraded", why: `health ${h.summary ?? "?"}, bandwidth ${h.bandwidth ?? "?"}` };
  return { state: "joined" };
}

/** Every card of the node. */
export function GpuTable(p: { gpus: Gpu[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">GPU</th>
          <th scope="col">class</th>
          <th scope="col">memory</th>
          <th scope="col">temp / power</th>
          <th scope="col">NUMA</th>
          <th scope="col">nearest adapter</th>
          <th scope="col">NVLink fabric</th>
          <th scope="col">health</th>
        </tr>
      </thead>
      <tbody>
        {p.gpus.map((g) => {
          const f = fabricOf(g);
          const h = g.health;
          return (
            <tr>
              <th scope="row">
                GPU {g.index}
                <div class="muted">{g.name}</div>
              </th>
              <td class="mono">{g.class}</td>
              <td>
                {g.memoryUsedMiB !== undefined ? `${gib(g.memoryUsedMiB)} of ` : ""}
                {gib(g.memoryTotalMiB)}
              </td>
              <td>
                {h.temperatureC !== undefined ? `${h.temperatureC} °C` : "—"}
                {h.powerDrawW !== undefined ? ` / ${Math.round(h.powerDrawW)} W` : ""}
              </td>
              <td>{g.numaNode ?? <span class="muted">—</span>}</td>
              <td class="mono">
                {g.nearestNic ? `${g.nearestNic} (${g.nics[0]?.path ?? "?"})` : <span class="muted">—</span>}
              </td>
              <td>
                {f.state === "none" ? (
                  <span class="muted">{f.why}</span>
                ) : (
                  <Badge state={f.state} label={f.state === "out" ? "not joined" : f.state} />
                )}
                {f.why && f.state !== "none" ? <div>{f.why}</div> : null}
              </td>
              <td>
                {h.problems.length ? (
                  <ul class="reasons problems">
                    {h.problems.map((x) => (
                      <li>{x}</li>
                    ))}
                  </ul>
                ) : (
                  <Badge state="healthy" label="healthy" />
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The GPU-by-GPU NVLink matrix as `nvidia-smi topo -m` reports it (NV# = # bonded links). */
export function NvlinkMatrix(p: { gpus: Gpu[] }) {
  if (!p.gpus.some((g) => g.nvlinkPeers.length))
    return (
      <p class="muted">No NVLink peers reported on this node (no NVLink, or `nvidia-smi topo -m` could not be read).</p>
    );
  return (
    <table class="matrix">
      <caption>NV# = bonded NVLinks between two GPUs; X = the GPU itself</caption>
      <thead>
        <tr>
          <td></td>
          {p.gpus.map((g) => (
            <th scope="col">GPU{g.index}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {p.gpus.map((a) => (
          <tr>
            <th scope="row">GPU{a.index}</th>
            {p.gpus.map((b) => {
              if (a.index === b.index)
                return (
                  <td class="self" aria-label={`GPU ${a.index}: itself`}>
                    X
                  </td>
                );
              const links = a.nvlinkPeers.find((x) => x.gpu === b.index)?.links;
              const name = `GPU ${a.index} to GPU ${b.index}: ${links ? `${links} NVLinks` : "no NVLink"}`;
              return links ? (
                <td class="nv" title={name} aria-label={name}>
                  NV{links}
                </td>
              ) : (
                <td class="none" title={name} aria-label={name}>
                  —
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The MIG instances of cards in MIG mode, or why a card in MIG mode offers none. */
export function MigTable(p: { gpus: Gpu[] }) {
  const cards = p.gpus.filter((g) => g.mig && g.mig.current.toLowerCase() !== "disabled");
  if (!cards.length) return <p class="muted">No card is in MIG mode.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">device</th>
          <th scope="col">profile</th>
          <th scope="col">class</th>
          <th scope="col">memory</th>
          <th scope="col">processes</th>
        </tr>
      </thead>
      <tbody>
        {cards.map((g) =>
          g.mig!.instances.length ? (
            g.mig!.instances.map((m) => (
              <tr>
                <th scope="row" class="mono">
                  {g.index}/mig{m.index}
                </th>
                <td>{m.profile ?? "—"}</td>
                <td class="mono">{m.class ?? "—"}</td>
                <td>
                  {m.memoryTotalMiB !== undefined
                    ? `${m.memoryUsedMiB !== undefined ? `${gib(m.memoryUsedMiB)} of ` : ""}${gib(m.memoryTotalMiB)}`
                    : "—"}
                </td>
                <td>
                  {m.processes.length ? (
                    m.processes.map((x) => `${x.name ?? "?"} (${x.pid})`).join(", ")
                  ) : (
                    <span class="muted">none</span>
                  )}
                </td>
              </tr>
            ))
          ) : (
            <tr>
              <th scope="row" class="mono">
                GPU {g.index}
              </th>
              <td colspan={4} class="problems">
                MIG mode {g.mig!.current}
                {g.mig!.pending && g.mig!.pending !== g.mig!.current ? ` (pending ${g.mig!.pending})` : ""}: no
                instances, nothing can run here
              </td>
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}
