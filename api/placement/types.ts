// Placement works on plain data: what it is given (PlanInput) and what it decides (Plan). No I/O, no clock.

/** A device placement may hand out: a whole GPU, or one MIG instance (id = 1000 + 100 × card + instance). */
export type PlaceDevice = {
  id: number;
  label: string;
  class: string;
  card: number;
  migIndex?: number;
  uuid: string;
  /** Plain-language reasons it must not be used (ECC, foreign process, …); empty when healthy. */
  problems: string[];
};

/** A GPU card's topology, for choosing sets of devices on one node. */
export type PlaceCard = {
  index: number;
  numaNode: number | null;
  nvlinkPeers: number[];
  /** NICs nearest first. */
  nics: string[];
  /**
   * The whole card's class (`a100-80g`), so that a card in MIG mode can be named when its instances cannot be placed.
   */
  class?: string;
  /**
   * Reasons the card cannot be used, as discovery reports them. A card in MIG mode with nothing carved, or with a
   * mode change pending, yields no device at all: this is the only place its problem can show.
   */
  problems?: string[];
};

export type PlaceNode = {
  id: string;
  mgmtAddr: string;
  mgmtInterface?: string;
  pool: string;
  labels: Record<string, string>;
  /** ready and fresh (not cordoned, draining or lost); when false, `notSchedulable` says why. */
  schedulable: boolean;
  notSchedulable?: string;
  /** Engines installed on the node (`vllm`, `sglang`, `llamacpp`, `trtllm`, `command`). */
  engines: string[];
  /** The installed engines' versions, as probed (`unknown` when a probe printed none). */
  engineVersions?: Record<string, string>;
  /** Engines whose build on this node is not CUDA's: engine → backend (`vulkan`). */
  engineBackends?: Record<string, string>;
  /** Adapters (HCAs) with a port ACTIVE: a GPU's nearest NIC is of use only when it is one of them. */
  activeNics?: string[];
  devices: PlaceDevice[];
  cards: PlaceCard[];
  /**
   * Multi-node NVLink: the node's domain and whether it may host a domain shard (shared/fabric.ts domainEligibility).
   */
  nvlink: { domain?: string; eligible: boolean; reasons: string[]; degraded: boolean; trayIndex?: number };
  /** Operator-named IB fabrics this node is on, with each HCA's state and NUMA node. */
  ibFabrics: { name: string; hcas: { name: string; active: boolean; numaNode: number | null }[] }[];
  /** Paths of weights present on local disk. */
  weights: string[];
  portRange: { first: number; last: number };
};

export type PlaceProfile = {
  name: string;
  engine: string;
  gpuClass: string;
  tp: number;
  pp: number;
  gpusPerNode: number;
  nodes: number;
  args: string[];
  env: Record<string, string>;
  startupTimeoutS: number;
};

export type PlaceModel = { name: string; servedName: string; weightsPath: string; profiles: PlaceProfile[] };

export type PlaceDeployment = {
  name: string;
  model: string;
  replicas: number;
  pool: string;
  /** Allowed profile names in order of preference; all of the model's, in its order, when absent. */
  profiles?: string[];
  nodeSelector?: Record<string, string>;
  /** Nodes where a replica of this deployment recently failed past its restart limit: other nodes are tried first. */
  avoid?: string[];
};

/** One shard as placed: everything an agent needs to start it (the StartShard of the poll). */
export type Shard = {
  shardId: string;
  replicaId: string;
  nodeId: string;
  rank: number;
  nnodes: number;
  deviceIds: number[];
  /** CUDA_VISIBLE_DEVICES value: card indices ("0,1"), or "MIG-<uuid>" for a MIG instance. */
  visibleDevices: string;
  hcas: string[];
  httpPort: number;
  leaderAddr: string;
  leaderPort: number;
  /** Ports the engine binds itself on rank 0's node (SGLang's DP attention), held like http and leader. */
  enginePorts?: number[];
  /** `single`, `nvlink:<domain key>` or `ib:<fabric name>`. */
  fabric: string;
  env: Record<string, string>;
};

/** A replica that exists (placed earlier) or is being placed now. */
export type Replica = {
  id: string;
  deployment: string;
  profile: string;
  fingerprint: string;
  /** Creation order, for "newest first" in scale-down. */
  seq: number;
  /** Every shard reported ready: stale replicas drain only once their replacements are. */
  ready?: boolean;
  shards: Shard[];
};

export type PlanInput = {
  nodes: PlaceNode[];
  models: PlaceModel[];
  deployments: PlaceDeployment[];
  /** Replicas already placed, with their shards (their devices and ports are taken). */
  replicas: Replica[];
  /** Ids for new replicas and shards come from here, so that the plan stays deterministic. */
  nextSeq: number;
};

export type Pending = { deployment: string; count: number; reason: string };

export type Plan = {
  /** New replicas, every shard placed (a gang is never partial). */
  assign: Replica[];
  /** Ids of replicas to remove (scale-down, deleted deployment, changed or unknown profile). */
  release: string[];
  /** Replicas that could not be placed, per deployment, with the reason a person can act on. */
  pending: Pending[];
  /** True when a replica was released to make room for its replacement: placement should run again. */
  again?: boolean;
  /**
   * Deployments that keep replicas to release as new ones become ready (a rolling replacement under way): a replica of
   * theirs becoming ready changes the next plan.
   */
  rolling?: string[];
};
