// NVML as plain data, and its pure mapping onto the wire's GPUs. The koffi binding is in nvml-koffi.ts;
// tests use a fake implementation of `Nvml` (or a fake libnvidia-ml.so built from C).
import { gpuClass, migClass } from "../../shared/classes.js";
import type { Gpu, GpuFabric } from "../../shared/schemas/gpu.js";

export type NvmlFabricInfo = {
  state: number;
  status: number;
  clusterUuid: string;
  cliqueId: number;
  healthMask: number;
};
export type NvmlMig = {
  index: number;
  uuid: string;
  name: string;
  memoryTotalBytes: number;
  memoryUsedBytes: number;
  gpuInstanceId?: number;
  computeInstanceId?: number;
};
export type NvmlGpu = {
  index: number;
  name: string;
  uuid: string;
  memoryTotalBytes: number;
  memoryUsedBytes: number;
  pciBusId: string;
  computeCapability?: [number, number];
  temperatureC?: number;
  migMode?: { current: number; pending: number };
  mig: NvmlMig[];
  fabric?: NvmlFabricInfo;
  /** PCI bus ids at the far end of each active NVLink (another GPU, or an NVSwitch). */
  nvlinkRemote: string[];
};
export type NvmlSnapshot = { driverVersion: string; cudaVersion: string; gpus: NvmlGpu[] };

/** Something that can read NVML once. */
export type Nvml = { snapshot(): NvmlSnapshot };

const MiB = 1024 * 1024;
const STATES = ["Not Supported", "Not Started", "In Progress", "Completed"];
const NVML_SUCCESS = 0;

/** Two-bit health field `at` of NVML's fabric healthMask: 1 = true, 2 = false, 0 = not supported. */
const healthBit = (mask: number, at: number) => ({ 1: "True", 2: "False" })[(mask >>> at) & 3] as string | undefined;

/** The fabric as nvidia-smi would print it, from nvmlGpuFabricInfoV_t. */
export function fabricFromNvml(f: NvmlFabricInfo | undefined): GpuFabric | undefined {
  if (!f || f.state === 0) return undefined;
  const degraded = healthBit(f.healthMask, 0);
  const health = Object.fromEntries(
    Object.entries({
      bandwidth: degraded === undefined ? undefined : degraded === "True" ? "Degraded" : "Full",
      routeRecoveryInProgress: healthBit(f.healthMask, 2),
      routeUnhealthy: healthBit(f.healthMask, 4),
      accessTimeoutRecovery: healthBit(f.healthMask, 6),
    }).filter(([, v]) => v !== undefined),
  );
  return {
    state: STATES[f.state] ?? `Unknown (${f.state})`,
    status: f.status === NVML_SUCCESS ? "Success" : `Failure (NVML ${f.status})`,
    clusterUuid: f.clusterUuid,
    cliqueId: String(f.cliqueId),
    ...(Object.keys(health).length ? { health } : {}),
  };
}

const normBus = (id: string) => id.toLowerCase().replace(/^0000(?=[0-9a-f]{4}:)/, "");

/**
 * NVLink peers from each GPU's remote ends: a link to another GPU counts for that pair; links to NVSwitches
 * (remote ends that are no GPU here) join every GPU that has them, with the smaller of the two link counts.
 */
export function nvlinkPeers(
  gpus: Pick<NvmlGpu, "index" | "pciBusId" | "nvlinkRemote">[],
): Map<number, { gpu: number; links: number }[]> {
  const byBus = new Map(gpus.map((g) => [normBus(g.pciBusId), g.index]));
  const direct = new Map<number, Map<number, number>>();
  const switched = new Map<number, number>();
  for (const g of gpus) {
    const peers = new Map<number, number>();
    for (const r of g.nvlinkRemote) {
      const peer = byBus.get(normBus(r));
      if (peer === undefined) switched.set(g.index, (switched.get(g.index) ?? 0) + 1);
      else if (peer !== g.index) peers.set(peer, (peers.get(peer) ?? 0) + 1);
    }
    direct.set(g.index, peers);
  }
  const out = new Map<number, { gpu: number; links: number }[]>();
  for (const g of gpus) {
    const peers = new Map(direct.get(g.index));
    const mine = switched.get(g.index) ?? 0;
    for (const o of gpus) {
      const theirs = switched.get(o.index) ?? 0;
      if (o.index !== g.index && mine && theirs) peers.set(o.index, (peers.get(o.index) ?? 0) + Math.min(mine, theirs));
    }
    out.set(
      g.index,
      [...peers].map(([gpu, links]) => ({ gpu, links })).sort((a, b) => a.gpu - b.gpu),
    );
  }
  return out;
}

/** GPUs on the wire from an NVML snapshot (MIG instances with their profile from the instance name). */
export function gpusFromNvml(s: NvmlSnapshot): Gpu[] {
  const peers = nvlinkPeers(s.gpus);
  return s.gpus.map((g) => {
    const cls = gpuClass(g.name, g.memoryTotalBytes / MiB);
    const migOn = g.migMode?.current === 1;
    const fabric = fabricFromNvml(g.fabric);
    return {
      index: g.index,
      uuid: g.uuid,
      name: g.name,
      class: cls,
      memoryTotalMiB: Math.round(g.memoryTotalBytes / MiB),
      memoryUsedMiB: Math.round(g.memoryUsedBytes / MiB),
      ...(g.computeCapability ? { computeCapability: g.computeCapability.join(".") } : {}),
      pciBusId: g.pciBusId,
      driverVersion: s.driverVersion,
      cudaVersion: s.cudaVersion,
      nvlinkPeers: peers.get(g.index) ?? [],
      nics: [],
      ...(fabric ? { fabric } : {}),
      health: {
        ...(g.temperatureC === undefined ? {} : { temperatureC: g.temperatureC }),
        processes: [],
        problems: [],
      },
      ...(g.migMode
        ? {
            mig: {
              current: migOn ? "Enabled" : "Disabled",
              pending: g.migMode.pending === 1 ? "Enabled" : "Disabled",
              instances: g.mig.map((m) => {
                const profile = / MIG (\S+)$/.exec(m.name)?.[1];
                return {
                  index: m.index,
                  uuid: m.uuid,
                  ...(profile ? { profile, class: migClass(cls, profile) } : {}),
                  ...(m.gpuInstanceId === undefined ? {} : { gpuInstanceId: m.gpuInstanceId }),
                  ...(m.computeInstanceId === undefined ? {} : { computeInstanceId: m.computeInstanceId }),
                  memoryTotalMiB: Math.round(m.memoryTotalBytes / MiB),
                  memoryUsedMiB: Math.round(m.memoryUsedBytes / MiB),
                  processes: [],
                };
              }),
            },
          }
        : {}),
    };
  });
}

/**
 * NVML's cards with what NVML does not read here taken from `nvidia-smi -q -x`, card by card (matched by UUID): the
 * processes (per MIG instance too), ECC, pending page retirement and row remapping, utilization, power, the slowdown
 * temperature, platform (tray) information and the fabric's health summary. NVML's own values win where it has them;
 * the inventory never holds less than the nvidia-smi path would.
 */
export function withSmiFacts(nvml: Gpu[], smi: readonly Gpu[]): Gpu[] {
  const byUuid = new Map(smi.map((g) => [g.uuid, g]));
  return nvml.map((g) => {
    const x = byUuid.get(g.uuid);
    if (!x) return g;
    const out: Gpu = { ...x, ...g, health: { ...x.health, ...g.health, processes: x.health.processes, problems: [] } };
    if (g.utilizationPercent === undefined && x.utilizationPercent !== undefined)
      out.utilizationPercent = x.utilizationPercent;
    if (!g.platform && x.platform) out.platform = x.platform;
    if (g.fabric || x.fabric)
      out.fabric = { ...x.fabric, ...g.fabric, health: { ...x.fabric?.health, ...g.fabric?.health } } as Gpu["fabric"];
    if (out.fabric && !Object.keys(out.fabric.health ?? {}).length) delete out.fabric.health;
    if (g.mig && x.mig) {
      const instance = (gi?: number, ci?: number, index?: number) =>
        x.mig!.instances.find((m) =>
          gi !== undefined ? m.gpuInstanceId === gi && m.computeInstanceId === ci : m.index === index,
        );
      out.mig = {
        ...g.mig,
        instances: g.mig.instances.map((m) => {
          const xm = instance(m.gpuInstanceId, m.computeInstanceId, m.index);
          return xm ? { ...m, processes: xm.processes } : m;
        }),
      };
    }
    return out;
  });
}
