// Crafted clusters for placement tests (not real captures): GB200 NVL72-like trays, an HGX H100 node, an A100 in
// MIG mode, L40S nodes on the InfiniBand fabric `ib-east`, and the catalog and declarations around them.
import type {
  PlaceCard,
  PlaceDeployment,
  PlaceDevice,
  PlaceModel,
  PlaceNode,
  PlaceProfile,
  PlanInput,
} from "../../api/placement/types.js";

export const DOMAIN = "9f3e2c1a-5b7d-4e8f-a0b1-c2d3e4f5a6b7.2";
export const OTHER_DOMAIN = "1a2b3c4d-0000-4000-8000-000000000001.7";
const NO_NVLINK: PlaceNode["nvlink"] = { eligible: false, reasons: [], degraded: false };

/** A node with defaults for everything the test does not say. */
export function node(id: string, over: Partial<PlaceNode> = {}): PlaceNode {
  return {
    id,
    mgmtAddr: `10.0.0.${id.length}`,
    pool: "prod",
    labels: {},
    schedulable: true,
    engines: ["vllm", "sglang"],
    devices: [],
    cards: [],
    nvlink: NO_NVLINK,
    ibFabrics: [],
    weights: [],
    portRange: { first: 8000, last: 8099 },
    ...over,
  };
}

/** Whole GPUs 0..count-1 of a class. */
export function gpus(cls: string, count: number, uuidPrefix = "GPU"): PlaceDevice[] {
  return Array.from({ length: count }, (_, i) => ({
    id: i,
    label: String(i),
    class: cls,
    card: i,
    uuid: `${uuidPrefix}-${i}`,
    problems: [],
  }));
}

/** Cards 0..count-1, all NVLink peers when `peers`, `perNuma` cards per NUMA node, NIC mlx5_<i> nearest each. */
export function cards(count: number, o: { peers: boolean; perNuma: number; cls?: string }): PlaceCard[] {
  const all = Array.from({ length: count }, (_, i) => i);
  return all.map((i) => ({
    index: i,
    numaNode: Math.floor(i / o.perNuma),
    nvlinkPeers: o.peers ? all.filter((j) => j !== i) : [],
    nics: [`mlx5_${i}`],
    ...(o.cls ? { class: o.cls } : {}),
  }));
}

/** An IB fabric attachment whose HCAs are all active unless listed in `down`. */
export function fabric(name: string, hcas: string[], down: string[] = []): PlaceNode["ibFabrics"][number] {
  return { name, hcas: hcas.map((h) => ({ name: h, active: !down.includes(h), numaNode: null })) };
}

type TrayOver = Omit<Partial<PlaceNode>, "nvlink"> & { nvlink?: Partial<PlaceNode["nvlink"]> };

/** One GB200 compute tray: 4 gb200-185g, all peers, two NUMA nodes of two, joined to `domain` and eligible. */
export function gb200Tray(id: string, tray: number, over: TrayOver = {}): PlaceNode {
  const { nvlink, ...rest } = over;
  return node(id, {
    devices: gpus("gb200-185g", 4, `GPU-${id}`),
    cards: cards(4, { peers: true, perNuma: 2 }),
    nvlink: { domain: DOMAIN, eligible: true, reasons: [], degraded: false, trayIndex: tray, ...nvlink },
    ...rest,
  });
}

/** An NVL72-like domain: `trays` trays named `<prefix>-t<i>`, tray index i. */
export function nvl72(trays: number, o: { prefix?: string; domain?: string; ib?: boolean } = {}): PlaceNode[] {
  const prefix = o.prefix ?? "gb";
  return Array.from({ length: trays }, (_, i) =>
    gb200Tray(`${prefix}-t${String(i).padStart(2, "0")}`, i, {
      nvlink: { domain: o.domain ?? DOMAIN },
      ...(o.ib ? { ibFabrics: [fabric("ib-gb", ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"])] } : {}),
    }),
  );
}

/** An HGX node: 8 h100-80g, all NVLink peers, NUMA 0 = cards 0-3 and NUMA 1 = 4-7, NICs mlx5_0..7, no domain. */
export function hgx(id: string, over: Partial<PlaceNode> = {}): PlaceNode {
  return node(id, {
    devices: gpus("h100-80g", 8, `GPU-${id}`),
    cards: cards(8, { peers: true, perNuma: 4 }),
    ...over,
  });
}

export const MIG_CLASS = "a100-80g-mig-3g.40gb";
const NOT_CARVED =
  "MIG mode is enabled but no instances are carved: create them (nvidia-smi mig -cgi … -C) or disable MIG";

/** An A100 node in MIG mode: 2 cards with two 3g.40gb instances each, or card 0 with nothing carved. */
export function a100Mig(id: string, o: { carved?: boolean } & Partial<PlaceNode> = {}): PlaceNode {
  const { carved = true, ...over } = o;
  const instances = (card: number): PlaceDevice[] =>
    [1, 2].map((m) => ({
      id: 1000 + 100 * card + m,
      label: `${card}/mig${m}`,
      class: MIG_CLASS,
      card,
      migIndex: m,
      uuid: `MIG-${id}-${card}-${m}`,
      problems: [],
    }));
  const cs = cards(2, { peers: true, perNuma: 2, cls: "a100-80g" });
  return node(id, {
    devices: carved ? [...instances(0), ...instances(1)] : instances(1),
    cards: carved ? cs : cs.map((c) => (c.index === 0 ? { ...c, problems: [NOT_CARVED] } : c)),
    ...over,
  });
}

/** An L40S node: 4 l40s-48g, no NVLink, NUMA 0/1, on `ib-east` with mlx5_0 (cards 0-1) and mlx5_1 (cards 2-3). */
export function l40s(id: string, over: Partial<PlaceNode> = {}): PlaceNode {
  return node(id, {
    devices: gpus("l40s-48g", 4, `GPU-${id}`),
    cards: Array.from({ length: 4 }, (_, i) => ({
      index: i,
      numaNode: i < 2 ? 0 : 1,
      nvlinkPeers: [],
      nics: [i < 2 ? "mlx5_0" : "mlx5_1", i < 2 ? "mlx5_1" : "mlx5_0"],
    })),
    ibFabrics: [fabric("ib-east", ["mlx5_0", "mlx5_1"])],
    ...over,
  });
}

/** A profile with tp = gpusPerNode × nodes and pp 1 unless told. */
export function profile(
  name: string,
  gpuClass: string,
  gpusPerNode = 1,
  nodes = 1,
  over: Partial<PlaceProfile> = {},
): PlaceProfile {
  return {
    name,
    engine: "vllm",
    gpuClass,
    tp: gpusPerNode * nodes,
    pp: 1,
    gpusPerNode,
    nodes,
    args: [],
    env: {},
    startupTimeoutS: 600,
    ...over,
  };
}

/** A model with the given profiles. */
export function model(name: string, profiles: PlaceProfile[], over: Partial<PlaceModel> = {}): PlaceModel {
  return { name, servedName: name, weightsPath: `/models/${name}`, profiles, ...over };
}

/** A deployment in pool prod. */
export function deployment(
  name: string,
  modelName: string,
  replicas: number,
  over: Partial<PlaceDeployment> = {},
): PlaceDeployment {
  return { name, model: modelName, replicas, pool: "prod", ...over };
}

/** A plan input with no replicas and nextSeq 1 unless told. */
export function input(over: Partial<PlanInput>): PlanInput {
  return { nodes: [], models: [], deployments: [], replicas: [], nextSeq: 1, ...over };
}
