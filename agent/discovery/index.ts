// discover(): every source read once and composed into the inventory the agent registers. A source that fails
// adds an error naming it; the rest is still reported.
import type { Gpu } from "../../shared/schemas/gpu.js";
import type { Hca } from "../../shared/schemas/hca.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { DEFAULT_PROBES, type EngineProbe, probeEngines } from "./engines.js";
import { run as defaultRun, type Runner } from "./exec.js";
import { composeGpus } from "./gpus.js";
import { readHost, readMounts, readStorage, readWeights } from "./host.js";
import { readInfiniband } from "./ib.js";
import { readImex } from "./imex.js";
import { gpusFromNvml, type Nvml, withSmiFacts } from "./nvml.js";
import { errorMessage } from "./objects.js";
import { type ListedGpu, parseSmiList } from "./smi-list.js";
import { parseSmiXml } from "./smi-xml.js";
import { parseTopo, type Topo } from "./topo.js";

export type DiscoverOptions = {
  nvidiaSmi?: string;
  /** Skip GPUs altogether (`--no-gpu`). */
  noGpu?: boolean;
  /** Read GPUs through NVML first; a function so the library is only loaded when asked for. */
  nvml?: () => Nvml;
  ibRoot?: string;
  imexCtl?: string;
  imexChannelsDir?: string;
  hostRoot?: string;
  storagePaths?: string[];
  weightsDirs?: string[];
  engineProbes?: EngineProbe[];
  fabrics?: { name: string; hcas: string[] }[];
  classOverrides?: Record<string, string>;
  /** Engines whose build is not CUDA's (agent.yaml `engines.<engine>.backend: vulkan`): reported for placement. */
  engineBackends?: Record<string, "cuda" | "vulkan">;
  /** The slowdown temperature of cards that report none (agent.yaml `temperature_slowdown_c`). */
  slowdownC?: number;
  ownPids?: ReadonlySet<number>;
  timeoutMs?: number;
  run?: Runner;
};

type Errors = Inventory["errors"];

/** Runs nvidia-smi and parses its output; on failure, the error names the source. */
async function readSmi<T>(
  o: Required<Pick<DiscoverOptions, "run" | "timeoutMs">>,
  cmd: string,
  args: string[],
  parse: (s: string) => T,
) {
  const source = `nvidia-smi ${args.join(" ")}`;
  const r = await o.run(cmd, args, o.timeoutMs);
  if (!r.ok) return { error: { source, message: r.error } };
  try {
    return { value: parse(r.stdout) };
  } catch (e) {
    return { error: { source, message: errorMessage(e) } };
  }
}

/** The GPUs and where they came from: NVML when asked and present, else nvidia-smi, else unavailable. */
async function discoverGpus(o: DiscoverOptions & Required<Pick<DiscoverOptions, "run" | "timeoutMs">>, errors: Errors) {
  if (o.noGpu) return { source: "none" as const, gpus: [] as Gpu[] };
  const smi = o.nvidiaSmi ?? "nvidia-smi";
  let cards: Gpu[] | undefined;
  let source: Inventory["gpuSource"] = "nvidia-smi";
  if (o.nvml) {
    try {
      cards = gpusFromNvml(o.nvml().snapshot());
      source = "nvml";
    } catch (e) {
      errors.push({ source: "nvml", message: `${errorMessage(e)}; read the GPUs with nvidia-smi instead` });
    }
  }
  const skip = Promise.resolve({ value: undefined, error: undefined });
  // -q -x runs with NVML too: it gives what NVML is not read for here (processes, ECC, retired pages, utilization)
  const [xml, list, topo] = await Promise.all([
    readSmi(o, smi, ["-q", "-x"], parseSmiXml),
    cards ? skip : readSmi<ListedGpu[]>(o, smi, ["-L"], parseSmiList),
    readSmi<Topo>(o, smi, ["topo", "-m"], parseTopo),
  ]);
  for (const r of [xml, list, topo]) if (r.error) errors.push(r.error);
  if (cards && xml.value) cards = withSmiFacts(cards, xml.value.gpus);
  else if (cards && xml.error) {
    errors.push({
      source: "nvml",
      message: "without nvidia-smi -q -x, the cards' processes, ECC, retired pages and utilization are unknown",
    });
  }
  cards ??= xml.value?.gpus;
  if (!cards) return { source: "unavailable" as const, gpus: [] as Gpu[] };
  return {
    source,
    gpus: composeGpus({
      cards,
      list: list.value,
      topo: topo.value,
      classOverrides: o.classOverrides,
      ownPids: o.ownPids,
      slowdownC: o.slowdownC,
    }),
  };
}

/** Each operator-named IB fabric this node is attached to: its HCAs that exist here, and their best ACTIVE rate. */
export function fabricAttachments(
  fabrics: { name: string; hcas: string[] }[],
  hcas: Hca[],
  errors: Errors,
): Inventory["fabrics"] {
  const byName = new Map(hcas.map((h) => [h.name, h]));
  return fabrics.map((f) => {
    const missing = f.hcas.filter((h) => !byName.has(h));
    if (missing.length)
      errors.push({
        source: "agent.yaml fabrics",
        message: `fabric ${f.name} names ${missing.join(", ")}, which this node does not have`,
      });
    const present = f.hcas.filter((h) => byName.has(h));
    const rates = present.flatMap((h) =>
      byName
        .get(h)!
        .ports.filter((p) => p.state === "ACTIVE")
        .map((p) => p.rateGbps ?? 0),
    );
    return { fabric: f.name, hcas: present, ...(rates.length ? { rateGbps: Math.max(...rates) } : {}) };
  });
}

/** The probed engines with the backends that are not CUDA's, for the engines that are installed. */
function withBackends(engines: Inventory["engines"], backends: Record<string, "cuda" | "vulkan"> = {}) {
  const other = Object.entries(backends).filter(([e, b]) => b !== "cuda" && e in engines.versions);
  return other.length ? { ...engines, backends: Object.fromEntries(other) } : engines;
}

/** Reads every source and composes the inventory; never throws for a source that fails. */
export async function discover(options: DiscoverOptions = {}): Promise<Inventory> {
  const o = { ...options, run: options.run ?? defaultRun, timeoutMs: options.timeoutMs ?? 10_000 };
  const errors: Errors = [];
  const root = o.hostRoot ?? "/";
  const mounts = await readMounts(root);
  const [gpus, hostMem, storage, weights, engines, ib, imex] = await Promise.all([
    discoverGpus(o, errors),
    readHost(root, errors),
    readStorage(o.storagePaths ?? [], mounts, errors),
    readWeights(o.weightsDirs ?? [], mounts, errors),
    probeEngines(o.engineProbes ?? DEFAULT_PROBES, o.run, Math.min(o.timeoutMs, 5000)),
    readInfiniband(o.ibRoot ?? "/sys/class/infiniband"),
    readImex({ ctl: o.imexCtl, channelsDir: o.imexChannelsDir, timeoutMs: Math.min(o.timeoutMs, 3000), run: o.run }),
  ]);
  errors.push(...ib.errors, ...imex.errors);
  const driver = gpus.gpus[0]?.driverVersion;
  return {
    gpuSource: gpus.source,
    host: { ...hostMem.host, ...(driver ? { nvidiaDriver: driver } : {}) },
    memory: hostMem.memory,
    storage,
    weights,
    engines: withBackends(engines, o.engineBackends),
    gpus: gpus.gpus,
    imex: imex.imex,
    hcas: ib.hcas,
    fabrics: fabricAttachments(o.fabrics ?? [], ib.hcas, errors),
    errors,
  };
}
