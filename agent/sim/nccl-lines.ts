// What the mock engine prints when asked for NCCL's INFO lines (NCCL_DEBUG=INFO, as the agent sets for engines of
// several GPUs): the init lines of NCCL 2.27.5 in the shapes of the real logs in test/fixtures/nccl, for the transport
// the engine's environment implies. NCCL_MNNVL_ENABLE=1: one MNNVL clique, every channel `via P2P/MNNVL`;
// NCCL_IB_HCA: NET/IB on exactly those HCAs, GPUDirect RDMA, P2P/IPC inside the node; neither, or
// LLMGW_SIM_NCCL_FALLBACK=socket (a scenario's `nccl_fallback: socket`): `NET/IB : No device found.` and NET/Socket
// between nodes. One node: P2P/IPC only. Where it runs is the `command` adapter's LLMGW_RANK and LLMGW_NNODES, its GPUs
// CUDA_VISIBLE_DEVICES. Pure.
import { fnv1a32, fnv1a64 } from "../../shared/hash.js";

export const NCCL_VERSION = "2.27.5+cuda12.9";
/** How the simulator's own environment makes one node's NCCL fall back (see agentSettings in scenario.ts). */
export const FALLBACK_ENV = "LLMGW_SIM_NCCL_FALLBACK";
const CHANNELS = 2;

type Env = Record<string, string | undefined>;
export type SimNetwork = { name: "IB"; hcas: string[] } | { name: "Socket"; fellBack: boolean };
/** What NCCL would choose with this environment. */
export type SimTransport = {
  rank: number;
  nnodes: number;
  /** The node's GPUs, as their physical indices (CUDA_VISIBLE_DEVICES, in order). */
  devices: string[];
  mnnvl: boolean;
  network: SimNetwork;
  iface: string;
};

/** HCA names of NCCL_IB_HCA (`=mlx5_0,mlx5_1`: exactly those; `mlx5_0:1`: a port); none for an exclusion list. */
export function hcaNames(value: string | undefined): string[] {
  const v = value?.trim() ?? "";
  if (!v || v.startsWith("^")) return [];
  return v
    .replace(/^=/, "")
    .split(",")
    .map((h) => h.split(":")[0]!.trim())
    .filter(Boolean);
}

const int = (v: string | undefined, fallback: number) => (v && /^\d+$/.test(v) ? Number(v) : fallback);

/** The transport the engine's environment implies (the `command` adapter's LLMGW_RANK and LLMGW_NNODES for its place). */
export function simTransport(env: Env): SimTransport {
  const hcas = hcaNames(env.NCCL_IB_HCA);
  const fellBack = env[FALLBACK_ENV] === "socket";
  const iface = env.NCCL_SOCKET_IFNAME?.replace(/^[=^]/, "").split(",")[0]?.trim() || "eth0";
  const devices = (env.CUDA_VISIBLE_DEVICES ?? "")
    .split(",")
    .map((d) => d.trim())
    .filter(Boolean);
  return {
    rank: int(env.LLMGW_RANK, 0),
    nnodes: Math.max(1, int(env.LLMGW_NNODES, 1)),
    devices: devices.length ? devices : ["0"],
    mnnvl: env.NCCL_MNNVL_ENABLE === "1",
    network: hcas.length && !fellBack ? { name: "IB", hcas } : { name: "Socket", fellBack },
    iface,
  };
}

/** One directed edge of a ring between two global ranks, as a channel line's `via`. */
function via(t: SimTransport, from: number, to: number, c: number): string {
  const L = t.devices.length;
  if (t.mnnvl) return "via P2P/MNNVL";
  if (Math.floor(from / L) === Math.floor(to / L)) return "via P2P/IPC";
  const mine = Math.floor(from / L) === t.rank ? "[send]" : "[receive]";
  if (t.network.name === "IB") return `${mine} via NET/IB/${c % t.network.hcas.length}/GDRDMA`;
  return `${mine} via NET/Socket/0`;
}

/** The channel lines one local rank prints: its ring neighbours, each edge it sends on or receives from the network. */
function channelLines(t: SimTransport, g: number): string[] {
  const L = t.devices.length;
  const n = L * t.nnodes;
  if (n < 2) return [];
  const next = (g + 1) % n;
  const prev = (g + n - 1) % n;
  const node = (r: number) => Math.floor(r / L);
  const out: string[] = [];
  for (let c = 0; c < CHANNELS; c++) {
    const ch = `Channel ${String(c).padStart(2, "0")}/0 :`;
    out.push(`${ch} ${g}[${g % L}] -> ${next}[${next % L}] ${via(t, g, next, c)}`);
    // an edge from another node is printed by both ends: the sender's [send], this rank's [receive]
    if (!t.mnnvl && node(prev) !== node(g))
      out.push(`${ch} ${prev}[${prev % L}] -> ${g}[${g % L}] ${via(t, prev, g, c)}`);
  }
  return out;
}

/**
 * NCCL's init lines for one engine process as NCCL_DEBUG=INFO prints them (`host:pid:tid [dev] NCCL INFO …`, one
 * block per local GPU); none unless NCCL_DEBUG is INFO in `env`.
 */
export function ncclInitLines(env: Env, host: string, pid: number): string[] {
  if (env.NCCL_DEBUG?.toUpperCase() !== "INFO") return [];
  const t = simTransport(env);
  const L = t.devices.length;
  const nRanks = L * t.nnodes;
  const addr = `${t.iface}:10.0.0.${11 + (t.rank % 240)}<0>`;
  const commId = fnv1a64(`${env.LLMGW_LEADER_ADDR ?? host}:${env.LLMGW_LEADER_PORT ?? ""}`);
  const lines: string[] = [];
  for (const [d, physical] of t.devices.entries()) {
    const say = (msg: string) => lines.push(`${host}:${pid}:${pid} [${d}] NCCL INFO ${msg}`);
    const g = t.rank * L + d;
    const nvml = /^\d+$/.test(physical) ? Number(physical) : d;
    const comm = `0x55${fnv1a32(`${host}:${pid}:${d}`).toString(16).padStart(8, "0")}${(0x40 + d * 8).toString(16)}`;
    const init = `ncclCommInitRank comm ${comm} rank ${g} nranks ${nRanks} cudaDev ${d} nvmlDev ${nvml} busId ${(0x18 + 0x10 * nvml).toString(16)}000 commId 0x${commId}`;
    say("cudaDriverVersion 12090");
    if (env.NCCL_SOCKET_IFNAME) say(`NCCL_SOCKET_IFNAME set by environment to ${env.NCCL_SOCKET_IFNAME}`);
    say(`Bootstrap: Using ${addr}`);
    say(`NCCL version ${NCCL_VERSION}`);
    if (t.nnodes > 1) {
      if (env.NCCL_IB_HCA) say(`NCCL_IB_HCA set to ${env.NCCL_IB_HCA}`);
      if (t.network.name === "IB") {
        const devs = t.network.hcas.map((h, i) => `[${i}]${h}:1/IB`).join(" ");
        say(`NET/IB : Using ${devs} [RO]; OOB ${addr}`);
        say("Using network IB");
      } else if (t.mnnvl && !t.network.fellBack) {
        // a tray of an NVLink domain with no HCAs assigned: its adapters are not what carries the replica (the real
        // GB200 log says only this)
        say("Using network IB");
      } else {
        say("NET/IB : No device found.");
        say(`NET/Socket : Using [0]${addr}`);
        say("Using network Socket");
      }
    }
    say(`${init} - Init START`);
    if (env.NCCL_MNNVL_ENABLE !== undefined) say(`NCCL_MNNVL_ENABLE set by environment to ${env.NCCL_MNNVL_ENABLE}.`);
    // an MNNVL clique counts as one node: every rank of it is local
    const nodes = t.mnnvl ? 1 : t.nnodes;
    const local = t.mnnvl ? nRanks : L;
    say(
      `comm ${comm} rank ${g} nRanks ${nRanks} nNodes ${nodes} localRanks ${local} localRank ${t.mnnvl ? g : d} MNNVL ${t.mnnvl ? 1 : 0}`,
    );
    for (const l of channelLines(t, g)) say(l);
    say(`Connected all rings, use ring PXN 0 GDR ${t.network.name === "IB" ? 1 : 0}`);
    say(`${init} - Init COMPLETE`);
  }
  return lines;
}
