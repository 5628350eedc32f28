// Pure composition of the GPU sources: `-q -x` (or NVML) cards, `-L` MIG names, `topo -m`, class overrides, problems.
import { gpuClass, migChangePending, migClass } from "../../shared/classes.js";
import type { Gpu, GpuProcess, MigInstance } from "../../shared/schemas/gpu.js";
import type { ListedGpu } from "./smi-list.js";
import type { Topo } from "./topo.js";

export type GpuSources = {
  cards: Gpu[];
  list?: ListedGpu[];
  topo?: Topo;
  classOverrides?: Record<string, string>;
  /** Processes that are llmgw's own engines: not "another process" on the card. */
  ownPids?: ReadonlySet<number>;
  /** The slowdown temperature of a card that does not report its own (agent.yaml `temperature_slowdown_c`). */
  slowdownC?: number;
};

/**
 * The temperature at which a card starts to slow itself down when it does not say (`gpu_temp_slow_threshold` is
 * absent on recent drivers): data-centre GPUs report theirs at 87–95 °C in the captures here; 87 keeps a margin.
 */
export const DEFAULT_SLOWDOWN_C = 87;

/**
 * Why a card is too hot to place on: at or over its slowdown temperature (its own, else `defaultC`), where it would
 * throttle whatever runs on it. Undefined when it is cooler or reports no temperature. Doctor warns by the same rule.
 */
export function overTemperature(g: Gpu, defaultC = DEFAULT_SLOWDOWN_C): string | undefined {
  const t = g.health.temperatureC;
  if (t === undefined) return undefined;
  const limit = g.health.temperatureSlowdownC ?? defaultC;
  return t >= limit ? `at ${t} °C, at or over its slowdown temperature (${limit} °C)` : undefined;
}

/** "in use by another process: …" for the processes that are not llmgw's own engines; undefined when there are none. */
function foreignProcesses(procs: readonly GpuProcess[], ownPids: ReadonlySet<number>): string | undefined {
  const foreign = procs.filter((p) => !ownPids.has(p.pid));
  if (!foreign.length) return undefined;
  return `in use by another process: ${foreign.map((p) => `${p.name ?? "?"} (pid ${p.pid})`).join(", ")}`;
}

/**
 * Plain-language reasons a MIG instance must not be placed on: another process on it. A process on one instance
 * leaves the card's other instances free (nvidia-smi names each process's GPU and compute instance).
 */
export function migInstanceProblems(m: MigInstance, ownPids: ReadonlySet<number> = new Set()): string[] {
  const busy = foreignProcesses(m.processes, ownPids);
  return busy ? [busy] : [];
}

/**
 * Plain-language reasons a card must not be placed on, which hold for every MIG instance of it too (ECC, pending
 * retirement or remapping, MIG layout, a process on the card itself). Processes on one MIG instance are that
 * instance's problem (migInstanceProblems).
 */
export function gpuProblems(
  g: Gpu,
  ownPids: ReadonlySet<number> = new Set(),
  slowdownC = DEFAULT_SLOWDOWN_C,
): string[] {
  const out: string[] = [];
  const h = g.health;
  const hot = overTemperature(g, slowdownC);
  if (hot) out.push(hot);
  if (h.eccUncorrectableVolatile)
    out.push(`${h.eccUncorrectableVolatile} uncorrectable ECC errors since the driver loaded`);
  if (h.retiredPagesPending) out.push("page retirement pending: reset the GPU");
  if (h.remappedRowsPending) out.push("row remapping pending: reset the GPU");
  if (g.mig && migChangePending(g))
    out.push(`MIG mode change pending (current ${g.mig.current}, pending ${g.mig.pending}): reset the GPU to apply it`);
  else if (g.mig?.current.toLowerCase() === "enabled" && !g.mig.instances.length) {
    out.push("MIG mode is enabled but no instances are carved: create them (nvidia-smi mig -cgi … -C) or disable MIG");
  }
  const busy = foreignProcesses(h.processes, ownPids);
  if (busy) out.push(busy);
  return out;
}

/** Every GPU with MIG names joined, topology applied, classes overridden where agent.yaml says, and its problems. */
export function composeGpus(s: GpuSources): Gpu[] {
  const listed = new Map((s.list ?? []).map((l) => [l.index, l]));
  const topo = new Map((s.topo?.gpus ?? []).map((t) => [t.index, t]));
  return s.cards.map((card) => {
    const cls = s.classOverrides?.[card.name] ?? (card.class || gpuClass(card.name, card.memoryTotalMiB));
    const g: Gpu = { ...card, class: cls };
    const l = listed.get(card.index);
    if (g.mig) {
      const names = new Map((l?.mig ?? []).map((m) => [m.index, m]));
      g.mig = {
        ...g.mig,
        instances: g.mig.instances.map((m) => {
          const n = names.get(m.index);
          const profile = m.profile ?? n?.profile;
          return {
            ...m,
            ...(n && !m.uuid ? { uuid: n.uuid } : {}),
            ...(profile ? { profile, class: migClass(cls, profile) } : {}),
          };
        }),
      };
    }
    const t = topo.get(card.index);
    if (t) {
      if (t.nvlinkPeers.length || !g.nvlinkPeers.length) g.nvlinkPeers = t.nvlinkPeers;
      g.numaNode = t.numaNode;
      g.nics = t.nics;
      if (t.nearestNic) g.nearestNic = t.nearestNic;
    }
    g.health = {
      ...g.health,
      problems: [...new Set([...g.health.problems, ...gpuProblems(g, s.ownPids, s.slowdownC)])],
    };
    if (g.mig) {
      g.mig = {
        ...g.mig,
        instances: g.mig.instances.map((m) => {
          const problems = [...new Set([...(m.problems ?? []), ...migInstanceProblems(m, s.ownPids)])];
          return problems.length ? { ...m, problems } : m;
        }),
      };
    }
    return g;
  });
}
