// A shard's transport judged against its placement: a multi-node shard placed on `ib:<fabric>` must use NET/IB on the
// HCAs it was given, one placed on `nvlink:<domain>` must use MNNVL; anything else is `degraded` with the reason. A
// one-node shard only reports what it uses inside the node. Pure.
import type { ShardTransport } from "../../shared/schemas/transport.js";
import type { NcclObservation } from "./parse.js";

export type Expected = { fabric: string; hcas: readonly string[] };

const natural = new Intl.Collator("en", { numeric: true }).compare;
const list = (xs: Iterable<string>) => [...xs].sort(natural).join(", ");
/** IB, or the IB plugins that ship with NCCL's SHARP plugin (IBext, IBext_v8). */
const isIb = (name: string | undefined) => !!name && /^IB/.test(name);
const version = (o: NcclObservation) => (o.version ? ` (NCCL ${o.version})` : "");

/** "ib:fabric-a (mlx5_0,mlx5_1)", "nvlink:<domain>", "single". */
export function expectedText(e: Expected): string {
  return e.fabric.startsWith("ib:") && e.hcas.length ? `${e.fabric} (${e.hcas.join(",")})` : e.fabric;
}

/** The channels' transports other than the network, most used first: "P2P, SHM". */
function local(o: NcclObservation): string[] {
  return [...o.channels]
    .filter(([k]) => !k.startsWith("NET/"))
    .sort((a, b) => b[1] - a[1])
    .map(([k]) => k);
}

/** What NCCL used over the network, in words, with its one-word name. */
function network(o: NcclObservation): { via: string; text: string } | undefined {
  const nets = [...o.channels.keys()].filter((k) => k.startsWith("NET/"));
  // before 2.x printed `Using network …`, the socket list after `NET/IB : No device found.` says it
  const chosen = o.network ?? (o.socketInterfaces.length && !o.ibDevices.length ? "Socket" : undefined);
  const socket = nets.includes("NET/Socket") || (!nets.length && chosen === "Socket");
  if (socket) {
    const on = o.socketInterfaces.length ? ` on ${list(o.socketInterfaces)}` : "";
    return { via: "NET/Socket", text: `NET/Socket${on}` };
  }
  const ib = nets.find((k) => isIb(k.slice(4))) ?? (!nets.length && isIb(chosen) ? "NET/IB" : undefined);
  if (ib) {
    const used = ibUsed(o);
    const roce = o.ibDevices.some((d) => used.includes(d.name) && d.linkLayer === "RoCE") ? " (RoCE)" : "";
    const gdr = o.gdrChannels
      ? " with GPUDirect RDMA"
      : o.plainNetChannels || o.gdrDisabled
        ? " without GPUDirect RDMA"
        : "";
    return { via: "NET/IB", text: `NET/IB${roce}${used.length ? ` on ${list(used)}` : ""}${gdr}` };
  }
  const other = nets[0] ?? (chosen ? `NET/${chosen}` : undefined);
  return other ? { via: other.slice(0, 32), text: other } : undefined;
}

/** IB device names NCCL used (or listed, when no channel named one). */
function ibUsed(o: NcclObservation): string[] {
  if (o.netDevicesUsed.size) return [...o.netDevicesUsed];
  return [...new Set(o.ibDevices.map((d) => d.name))];
}

/**
 * The verdict on what NCCL said so far. `settled`: the engine serves, so what was not said will not be — silence then
 * is `unverified`, not `pending`. A one-node shard NCCL said nothing about has nothing to report (undefined).
 */
export function judgeTransport(e: Expected, o: NcclObservation, settled: boolean): ShardTransport | undefined {
  const expected = expectedText(e);
  const base = { expected, ...(o.version ? { ncclVersion: o.version } : {}) };
  const net = network(o);
  const inside = local(o);
  const nvls = o.nvls ? " and NVLS" : "";
  if (!e.fabric.startsWith("ib:") && !e.fabric.startsWith("nvlink:")) {
    if (!inside.length && !net) return undefined;
    const observed = inside.length ? `${inside.join(", ")}${nvls} inside the node` : net!.text;
    return {
      ...base,
      verdict: "local",
      via: (inside[0] ?? net!.via).slice(0, 32),
      observed: `${observed}${version(o)}`,
    };
  }
  const placed = `placed on ${expected}`;
  if (e.fabric.startsWith("nvlink:")) {
    if (o.mnnvl) return { ...base, verdict: "ok", via: "MNNVL", observed: `MNNVL${nvls}${version(o)}` };
    if (o.mnnvl === false || net)
      return {
        ...base,
        verdict: "degraded",
        via: net?.via ?? "none",
        observed: `${net ? net.text : "no MNNVL"}${version(o)}`,
        reason: `${placed}; NCCL ${net ? `uses ${net.text}` : "reports MNNVL 0"}${o.mnnvl === false && net ? " (MNNVL 0)" : ""}`,
      };
  } else if (net) {
    const observed = `${net.text}${version(o)}`;
    // sockets, or a network plugin that is not IB's
    if (net.via !== "NET/IB")
      return { ...base, verdict: "degraded", via: net.via, observed, reason: `${placed}; NCCL uses ${net.text}` };
    const foreign = ibUsed(o).filter((d) => !e.hcas.includes(d));
    if (foreign.length && e.hcas.length)
      return {
        ...base,
        verdict: "degraded",
        via: net.via,
        observed,
        reason: `${placed}; NCCL uses NET/IB on ${list(foreign)}, not assigned to the shard`,
      };
    return { ...base, verdict: "ok", via: net.via, observed };
  }
  if (!settled) return { ...base, verdict: "pending" };
  const said = o.version ? `NCCL ${o.version} printed no transport lines` : "no NCCL lines in the engine's log";
  return {
    ...base,
    verdict: "unverified",
    reason: `${placed}; ${said} (NCCL_DEBUG set by the profile, or an engine that does not use NCCL)`,
  };
}
