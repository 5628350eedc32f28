// agent.yaml: one zod schema for the agent's configuration; every bad key is reported at once.
import { readFile } from "node:fs/promises";
import { Labels } from "../shared/schemas/common.js";
import { Engine } from "../shared/schemas/model.js";
import { parseYamlWith } from "../shared/yaml-file.js";
import { z } from "../shared/z.js";
import { DEFAULT_PROBES } from "./discovery/engines.js";
import { DEFAULT_SLOWDOWN_C } from "./discovery/gpus.js";

const Path = z.string().min(1);

type EngineSettings = { probe?: string[]; command?: string[]; backend?: "cuda" | "vulkan" };

/** The version probes of the engines agent.yaml lists: its own probe, else the default one (`command` has none). */
function probesFor(engines: Partial<Record<Engine, EngineSettings>>) {
  return Object.entries(engines).flatMap(([engine, e]) =>
    e.probe
      ? [{ engine, command: [...e.probe] }]
      : DEFAULT_PROBES.filter((p) => p.engine === engine).map((p) => ({ engine, command: [...p.command] })),
  );
}

export const AgentConfigFile = z
  .strictObject({
    server: z.url().optional(),
    join_token: z.string().min(1).optional(),
    join_token_file: Path.optional(),
    node_id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/)
      .optional(),
    hostname: z.string().min(1).optional(),
    mgmt_addr: z.string().min(1).optional(),
    mgmt_interface: z.string().min(1).optional(),
    labels: Labels.default({}),
    tls: z
      .strictObject({
        ca_file: Path.optional(),
        cert_file: Path.optional(),
        key_file: Path.optional(),
        insecure: z.boolean().default(false),
      })
      .optional(),
    fabrics: z
      .array(z.strictObject({ name: z.string().min(1).max(64), hcas: z.array(z.string().min(1)).min(1) }))
      .default([]),
    state_dir: Path.default("/var/lib/llmgw"),
    port_range: z
      .strictObject({ first: z.number().int().min(1024).max(65535), last: z.number().int().min(1024).max(65535) })
      .refine((r) => r.first <= r.last, "first must not exceed last")
      .default({ first: 20000, last: 20999 }),
    weights_dirs: z.array(Path).default([]),
    storage_paths: z.array(Path).default([]),
    engines: z
      .partialRecord(
        Engine,
        z.strictObject({
          probe: z.array(z.string().min(1)).min(1).optional(),
          command: z.array(z.string().min(1)).min(1).optional(),
          backend: z.enum(["cuda", "vulkan"]).optional(),
        }),
      )
      .optional(),
    bind_host: z.string().min(1).default("0.0.0.0"),
    restart_limit: z.number().int().min(0).max(100).default(5),
    restart_base_s: z.number().positive().max(3600).default(2),
    restart_max_s: z.number().positive().max(86400).default(300),
    stop_grace_s: z.number().min(0).max(3600).default(15),
    drain_timeout_s: z.number().min(0).max(3600).default(30),
    adopt_grace_s: z.number().min(0).max(86400).default(120),
    log_max_mib: z
      .number()
      .positive()
      .max(1 << 20)
      .default(50),
    check_interval_s: z.number().min(1).max(3600).default(15),
    nvidia_smi: Path.default("nvidia-smi"),
    nvml: z.boolean().default(false),
    ib_root: Path.default("/sys/class/infiniband"),
    imex_ctl: Path.default("nvidia-imex-ctl"),
    imex_channels_dir: Path.default("/dev/nvidia-caps-imex-channels"),
    class_overrides: z.record(z.string(), z.string().regex(/^[a-z0-9][a-z0-9.-]*$/)).default({}),
    temperature_slowdown_c: z.number().min(40).max(120).default(DEFAULT_SLOWDOWN_C),
  })
  .transform((c) => ({
    server: c.server,
    joinToken: c.join_token,
    joinTokenFile: c.join_token_file,
    nodeId: c.node_id,
    hostname: c.hostname,
    mgmtAddr: c.mgmt_addr,
    mgmtInterface: c.mgmt_interface,
    labels: c.labels,
    tls: c.tls && {
      caFile: c.tls.ca_file,
      certFile: c.tls.cert_file,
      keyFile: c.tls.key_file,
      insecure: c.tls.insecure,
    },
    fabrics: c.fabrics,
    stateDir: c.state_dir,
    portRange: c.port_range,
    weightsDirs: c.weights_dirs,
    storagePaths: c.storage_paths,
    engineProbes: c.engines ? probesFor(c.engines) : DEFAULT_PROBES.map((p) => ({ ...p, command: [...p.command] })),
    engineOptions: c.engines ?? {},
    bindHost: c.bind_host,
    restartLimit: c.restart_limit,
    restartBackoff: { baseMs: c.restart_base_s * 1000, maxMs: c.restart_max_s * 1000 },
    stopGraceMs: c.stop_grace_s * 1000,
    drainTimeoutMs: c.drain_timeout_s * 1000,
    adoptGraceMs: c.adopt_grace_s * 1000,
    logMaxBytes: Math.round(c.log_max_mib * 1024 * 1024),
    checkIntervalMs: c.check_interval_s * 1000,
    nvidiaSmi: c.nvidia_smi,
    nvml: c.nvml,
    ibRoot: c.ib_root,
    imexCtl: c.imex_ctl,
    imexChannelsDir: c.imex_channels_dir,
    classOverrides: c.class_overrides,
    slowdownC: c.temperature_slowdown_c,
  }));
export type AgentConfig = z.infer<typeof AgentConfigFile>;

/** The configuration with nothing set: every default. */
export const defaultAgentConfig = (): AgentConfig => AgentConfigFile.parse({});

/** Parses agent.yaml text; throws one Error listing every bad key by its path. */
export const parseAgentConfig = (text: string, source = "agent.yaml"): AgentConfig =>
  parseYamlWith(AgentConfigFile, text, source);

/** Reads and parses an agent.yaml file. */
export async function loadAgentConfig(path: string): Promise<AgentConfig> {
  return parseAgentConfig(await readFile(path, "utf8"), path);
}
