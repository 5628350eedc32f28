// What `llmgw doctor` judges: the node's inventory, the parts of agent.yaml the checks read, and the probes that
// discovery does not make (NVML when unused, the control plane). Gathered by gather.ts, judged by the pure checks.
import type { DoctorCheck, DoctorStatus } from "../../shared/schemas/doctor.js";
import type { Inventory } from "../../shared/schemas/inventory.js";

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

export type ServerProbe = { url: string; health: HealthProbe; token: TokenProbe };

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
};

/** A check result; a passing check carries no fix. */
export function result(id: string, status: DoctorStatus, finding: string, fix?: string): DoctorCheck {
  return fix === undefined || status === "ok" ? { id, status, finding } : { id, status, finding, fix };
}
