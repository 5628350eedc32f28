// What `llmgw doctor` judges: the node's inventory, the parts of agent.yaml the checks read, and the probes that
// discovery does not make (NVML when unused, the control plane). Gathered by gather.ts, judged by the pure checks.
import type { DoctorCheck, DoctorStatus } from "../../shared/schemas/doctor.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import type { NvlinkPeers } from "../../shared/schemas/nvlink-peers.js";
import type { ImexNodesConfig } from "../discovery/imex-config.js";

/** NVML loaded on its own (only when agent.yaml does not read GPUs through it; else discovery's result tells). */
export type NvmlProbe = { ok: true; driverVersion: string; gpus: number } | { ok: false; error: string };

/** GET /healthz; `localMs` is the local clock half-way through the request, `serverDate` the `Date` header. */
export type HealthProbe =
  | { ok: true; version?: string; rttMs: number; localMs: number; serverDate?: string }
  | { ok: false; error: string };

/** The node token of the state dir, and what a node-scoped call made of it. */
export type TokenProbe =
  | { kind: "none"; joinToken: boolean }
  | { kind: "unreadable"; error: string }
  | { kind: "unchecked"; nodeId: string }
  | { kind: "accepted"; nodeId: string }
  | { kind: "refused"; nodeId: string; status: number; message: string };

/** GET /api/v1/agents/{node}/nvlink-peers: the addresses the control plane sees in this node's domain, or why not. */
export type PeersProbe = ({ ok: true } & NvlinkPeers) | { ok: false; error: string };

/** `peers` is asked only once the node token is accepted. */
export type ServerProbe = { url: string; health: HealthProbe; token: TokenProbe; peers?: PeersProbe };

/** What decides whether GPUDirect RDMA is possible, read under /sys and /proc. */
export type GpuDirectFacts = {
  /** `/sys/module/nvidia_peermem` exists: the peer-memory module of the driver is loaded. */
  peermem: boolean;
  /** `/sys/kernel/mm/memory_peers/nv_mem/version` exists: the older nv_peer_mem module is loaded. */
  nvPeerMem: boolean;
  /** The first line of `/proc/driver/nvidia/version`, when it could be read: it names the open kernel module. */
  driverVersion?: string;
  /** `/proc/sys/kernel/osrelease`: dma-buf needs Linux 5.12 or newer. */
  kernel?: string;
};

export type DoctorInput = {
  inventory: Inventory;
  config: {
    fabrics: { name: string; hcas: string[] }[];
    /** agent.yaml reads GPUs through NVML (`nvml: true`). */
    nvml: boolean;
    /** agent.yaml configures the `command` engine, which needs no probe and is always present. */
    commandEngine: boolean;
    stateDir: string;
    imexChannelsDir: string;
    /** agent.yaml's slowdown temperature for cards that report none (`temperature_slowdown_c`). */
    slowdownC?: number;
  };
  /** Processes of llmgw's own engines (from the state dir): not "another process" on a card. */
  ownPids?: ReadonlySet<number>;
  /** Absent when agent.yaml uses NVML (discovery tried it) — then the inventory says how it went. */
  nvml?: NvmlProbe;
  /** Absent when no control plane is configured. */
  server?: ServerProbe;
  /** agent.yaml's `imex_nodes_config`, as read. */
  imexConfig: ImexNodesConfig;
  gpudirect: GpuDirectFacts;
};

/** A check result; a passing check carries no fix. */
export function result(id: string, status: DoctorStatus, finding: string, fix?: string): DoctorCheck {
  return fix === undefined || status === "ok" ? { id, status, finding } : { id, status, finding, fix };
}
