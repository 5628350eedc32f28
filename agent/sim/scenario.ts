// Simulated nodes for `llmgw demo` and the failure drills: a scenario (YAML) names the nodes of a cluster — GB200 trays
// of one NVLink domain, HGX H100 boards, A100s in MIG mode, L40S cards on an InfiniBand fabric — and the models to run.
// Each node gets a directory of files that the fake nvidia-smi and the fake nvidia-imex-ctl answer from, rendered
// from the real captures in test/fixtures with the node's own GPU UUIDs, tray number and state. Changing a node's
// state (a GPU still joining the fabric, a fabric manager restart, IMEX down) rewrites those files; the agent sees it
// at its next discovery and sends a heartbeat at once. A node whose NCCL falls back to sockets (`nccl_fallback`) is told
// so through its agent's environment, which its engines inherit.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseYamlWith } from "../../shared/yaml-file.js";
import { z } from "../../shared/z.js";
import { FIXTURES, IB_ROOT, mockProfile, SIM_DIR } from "./cluster.js";
import { FALLBACK_ENV } from "./nccl-lines.js";

export const FAKE_IMEX_CTL = join(SIM_DIR, "fake-nvidia-imex-ctl");
export const DEFAULT_SCENARIO = join(SIM_DIR, "scenarios", "demo.yaml");

/** What the captures of each kind of node are (real ones from test/fixtures; see test/fixtures/SOURCES.md). */
const KINDS = {
  gb200: {
    xml: "smi-xml/gb200-4gpu-nvl-fabric-clique2-580.173.02-k8stestinfra.xml",
    topo: "topo/gb200-4gpu-8nic-legend-full-UNPINNED-REPO.txt",
  },
  "hgx-h100": {
    xml: "smi-xml/hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml",
    topo: "topo/hgx-h100-8x-nv18-8nic-legend-spaces-sglang30401.txt",
  },
  "a100-mig": { xml: "smi-xml/a100-sxm4-80gb-mig-v12-telegraf.xml", topo: "topo/CRAFTED-1gpu-2nic-pix-sys.txt" },
  l40s: { xml: "smi-xml/l40s-1gpu-595.91.07-k8stestinfra.xml", topo: "topo/CRAFTED-1gpu-2nic-pix-sys.txt" },
} as const;
export type SimKind = keyof typeof KINDS;

/** The A100's four MIG instances as the simulated `nvidia-smi -L` names them: a mixed layout (1 + 1 + 2 + 2 slices). */
const MIG_PROFILES = ["1g.20gb", "1g.20gb", "2g.20gb", "2g.20gb"];

// YAML reads an unquoted 1234 as a number: taken as the digits it was written with
const Hex4 = z.preprocess(
  (v) => (typeof v === "number" && Number.isInteger(v) ? String(v).padStart(4, "0") : v),
  z.string().regex(/^[0-9a-f]{4}$/, "4 lowercase hex digits"),
);

export const SimState = z.strictObject({
  /** GPU indices whose NVLink fabric is still joining (state In Progress). */
  joining: z.array(z.number().int().min(0).max(7)).optional(),
  /** A fabric manager restart on the tray: every card drops out of the NVLink domain at once. */
  fabric_restart: z.boolean().optional(),
  /** The node's IMEX daemon is down. */
  imex_down: z.boolean().optional(),
  /** GPU indices whose NVLink bandwidth is reported Degraded: the tray stays in its domain, which is placed on last. */
  degraded: z.array(z.number().int().min(0).max(7)).optional(),
});
export type SimState = z.infer<typeof SimState>;

const SimNode = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes"),
  kind: z.enum(Object.keys(KINDS) as [SimKind, ...SimKind[]]),
  /** Replaces the first four hex digits of every GPU and MIG UUID of the capture, so each node's GPUs are distinct. */
  uuid_prefix: Hex4,
  /** GB200 trays: the tray's number in the rack. */
  tray: z.number().int().min(1).max(18).optional(),
  /** The InfiniBand fabric the node's HCAs (mlx5_0, mlx5_1) are on; none when absent. */
  ib_fabric: z.string().min(1).max(64).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  state: SimState.optional(),
  /**
   * The node's NCCL finds no InfiniBand device and falls back to sockets: its engines print NCCL's socket lines
   * whatever HCAs placement gave them (a multi-node shard placed on InfiniBand is then judged degraded).
   */
  nccl_fallback: z
    .enum(["socket"], { error: (i) => `must be socket (the one fallback simulated), not ${JSON.stringify(i.input)}` })
    .optional(),
});
export type SimNode = z.infer<typeof SimNode>;

const SimModel = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
  replicas: z.number().int().min(1).max(64),
  gpu_class: z.string().min(1),
  tp: z.number().int().min(1).optional(),
  gpus_per_node: z.number().int().min(1).optional(),
  nodes: z.number().int().min(1).optional(),
  /** The deployment's `transport` (require, the default, or prefer: a degraded replica is served). */
  transport: z.enum(["require", "prefer"]).optional(),
  /** One line for people: what the replica is. */
  about: z.string().min(1).max(200),
});
export type SimModel = z.infer<typeof SimModel>;

export const Scenario = z
  .strictObject({
    nodes: z.array(SimNode).min(1).max(64),
    models: z.array(SimModel).max(32).default([]),
  })
  .superRefine((s, ctx) => {
    const seen = new Set<string>();
    for (const [i, n] of s.nodes.entries()) {
      if (seen.has(n.id))
        ctx.addIssue({ code: "custom", path: ["nodes", i, "id"], message: `node ${n.id} appears twice` });
      seen.add(n.id);
      if (n.kind === "gb200" && n.tray === undefined)
        ctx.addIssue({ code: "custom", path: ["nodes", i, "tray"], message: "a gb200 node needs its tray number" });
    }
    const prefixes = s.nodes.map((n) => n.uuid_prefix);
    for (const [i, p] of prefixes.entries())
      if (prefixes.indexOf(p) !== i)
        ctx.addIssue({
          code: "custom",
          path: ["nodes", i, "uuid_prefix"],
          message: `uuid_prefix ${p} is used by another node`,
        });
  });
export type Scenario = z.infer<typeof Scenario>;

/** Parses a scenario file's text; throws one Error listing every bad key. */
export const parseScenario = (text: string, source: string): Scenario =>
  parseYamlWith(Scenario, text, source, "invalid scenario");
/** Reads a scenario file. */
export const loadScenario = (path: string): Scenario => parseScenario(readFileSync(path, "utf8"), path);

const fixture = (rel: string) => readFileSync(join(FIXTURES, rel), "utf8");

/** The capture's `<gpu …>…</gpu>` elements and what is around them. */
function splitGpus(xml: string): { head: string; gpus: string[]; tail: string } {
  const parts = xml.split(/(?=<gpu id=)/);
  const head = parts.shift()!;
  const last = parts.pop()!;
  const end = last.lastIndexOf("</gpu>") + "</gpu>".length;
  return { head, gpus: [...parts, last.slice(0, end)], tail: last.slice(end) };
}

/** One GPU element with its fabric still joining (In Progress, no status yet), as after a fabric manager restart. */
const joiningFabric = (gpu: string) =>
  gpu.replace(/<fabric>[\s\S]*?<\/fabric>/, (f) =>
    f
      .replace(/<state>[^<]*<\/state>/, "<state>In Progress</state>")
      .replace(/<status>[^<]*<\/status>/, "<status>N/A</status>"),
  );

/** One GPU element whose NVLink bandwidth is Degraded (the fabric still Completed and joined). */
const degradedFabric = (gpu: string) => gpu.replace(/<bandwidth>[^<]*<\/bandwidth>/, "<bandwidth>Degraded</bandwidth>");

/** `nvidia-smi -q -x` of a node: the capture with the node's UUIDs, tray and fabric state. */
export function renderSmiXml(node: SimNode): string {
  let xml = fixture(KINDS[node.kind].xml).replace(/\b(GPU|MIG)-[0-9a-f]{4}/g, `$1-${node.uuid_prefix}`);
  if (node.kind !== "gb200") return xml;
  xml = xml
    .replace(/<tray_index>[^<]*<\/tray_index>/g, `<tray_index>${node.tray}</tray_index>`)
    .replace(/<slot_number>[^<]*<\/slot_number>/g, `<slot_number>${node.tray}</slot_number>`);
  const { head, gpus, tail } = splitGpus(xml);
  const joining = new Set(node.state?.joining ?? []);
  const degraded = new Set(node.state?.degraded ?? []);
  const render = (g: string, i: number) => {
    const out = degraded.has(i) ? degradedFabric(g) : g;
    return node.state?.fabric_restart || joining.has(i) ? joiningFabric(out) : out;
  };
  return head + gpus.map(render).join("") + tail;
}

/** `nvidia-smi -L` of a node, from its `-q -x` (MIG instances named by the simulated profiles). */
export function renderSmiList(xml: string, kind: SimKind): string {
  const lines: string[] = [];
  for (const [i, g] of splitGpus(xml).gpus.entries()) {
    const name = /<product_name>([^<]*)<\/product_name>/.exec(g)?.[1] ?? "NVIDIA GPU";
    const uuid = /<uuid>([^<]*)<\/uuid>/.exec(g)?.[1] ?? "";
    lines.push(`GPU ${i}: ${name} (UUID: ${uuid})`);
    if (kind !== "a100-mig") continue;
    const instances = g.match(/<mig_device>/g)?.length ?? 0;
    for (let m = 0; m < instances; m++) {
      const migUuid = `MIG-${uuid.slice(4, 8)}${String(m).padStart(4, "0")}-0000-4000-8000-${String(i).padStart(12, "0")}`;
      lines.push(
        `  MIG ${(MIG_PROFILES[m] ?? "1g.20gb").padEnd(11)} Device ${String(m).padStart(2)}: (UUID: ${migUuid})`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

/** `nvidia-imex-ctl -N -j` as every tray of the domain sees it: its peers, by tray order, down ones UNAVAILABLE. */
export function renderImexDomain(trays: SimNode[]): string {
  const nodes = Object.fromEntries(
    [...trays]
      .sort((a, b) => a.tray! - b.tray!)
      .map((t, i) => [
        String(i),
        {
          status: t.state?.imex_down ? "UNAVAILABLE" : "READY",
          host: `10.0.0.${t.tray! + 10}`,
          hostName: t.id,
          version: "580.173.02",
        },
      ]),
  );
  return `${JSON.stringify({ status: "UP", nodes }, null, 2)}\n`;
}

/** The files of one node's directory (name → content; undefined: the file must not exist). */
export function renderNode(node: SimNode, scenario: Scenario): Record<string, string | undefined> {
  const xml = renderSmiXml(node);
  const topo = KINDS[node.kind].topo;
  const gb200 = node.kind === "gb200";
  return {
    "smi-q.xml": xml,
    "smi-L.txt": renderSmiList(xml, node.kind),
    "smi-topo.txt": topo ? fixture(topo) : undefined,
    // a daemon that is down answers -q with UNAVAILABLE and has no domain to list
    "imex-q.txt": gb200 ? (node.state?.imex_down ? "UNAVAILABLE\n" : "READY\n") : undefined,
    "imex-N.json":
      gb200 && !node.state?.imex_down ? renderImexDomain(scenario.nodes.filter((n) => n.kind === "gb200")) : undefined,
    "imex-channels/channel0": gb200 ? "" : undefined,
  };
}

/** Writes (or rewrites) a node's directory under `root`; each file is replaced at once, never seen half-written. */
export function writeNode(root: string, node: SimNode, scenario: Scenario): string {
  const dir = simDir(root, node.id);
  mkdirSync(join(dir, "imex-channels"), { recursive: true });
  for (const [name, content] of Object.entries(renderNode(node, scenario))) {
    const path = join(dir, name);
    if (content === undefined) {
      rmSync(path, { force: true });
      continue;
    }
    writeFileSync(`${path}.tmp`, content);
    renameSync(`${path}.tmp`, path);
  }
  return dir;
}

export const simDir = (root: string, nodeId: string) => join(root, `sim-${nodeId}`);

/** Changes a node's state while the cluster runs (every node's files are rewritten: IMEX peers see each other). */
export function setNodeState(root: string, scenario: Scenario, nodeId: string, state: SimState): Scenario {
  const next: Scenario = { ...scenario, nodes: scenario.nodes.map((n) => (n.id === nodeId ? { ...n, state } : n)) };
  if (!next.nodes.some((n) => n.id === nodeId)) throw new Error(`no node ${nodeId} in the scenario`);
  for (const n of next.nodes) if (existsSync(simDir(root, n.id))) writeNode(root, n, next);
  return next;
}

/**
 * The agent.yaml settings and environment that put a node's agent on its simulated hardware. The environment reaches
 * the engines too (an agent starts them with its own environment plus the shard's): the fake nvidia-smi's directory,
 * and LLMGW_SIM_NCCL_FALLBACK for a node whose NCCL falls back (the mock engine prints what NCCL would then say).
 */
export function agentSettings(
  root: string,
  node: SimNode,
): { extra: Record<string, unknown>; env: Record<string, string> } {
  const dir = simDir(root, node.id);
  return {
    extra: {
      imex_ctl: node.kind === "gb200" ? FAKE_IMEX_CTL : join(dir, "no-imex-ctl"),
      imex_channels_dir: join(dir, "imex-channels"),
      ib_root: IB_ROOT,
      ...(node.ib_fabric ? { fabrics: [{ name: node.ib_fabric, hcas: ["mlx5_0", "mlx5_1"] }] } : {}),
      labels: { sim: node.kind, ...node.labels },
    },
    env: { FAKE_SIM_DIR: dir, ...(node.nccl_fallback ? { [FALLBACK_ENV]: node.nccl_fallback } : {}) },
  };
}

/** The model profile of a scenario model: the mock engine through the `command` adapter, with `engineArgs`. */
export function modelProfile(m: SimModel, engineArgs: string[]) {
  const more: Record<string, unknown> = { gpuClass: m.gpu_class };
  if (m.tp !== undefined) more.tp = m.tp;
  if (m.gpus_per_node !== undefined) more.gpusPerNode = m.gpus_per_node;
  if (m.nodes !== undefined) more.nodes = m.nodes;
  return mockProfile("mock", more, engineArgs);
}
