// agent.yaml: one zod schema for the agent's configuration; every bad key is reported at once.
import { readFile } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { Labels } from "../shared/schemas/common.js";
import { Engine } from "../shared/schemas/model.js";
import { parseYamlWith } from "../shared/yaml-file.js";
import { z } from "../shared/z.js";
import { DEFAULT_PROBES } from "./discovery/engines.js";
import { DEFAULT_SLOWDOWN_C } from "./discovery/gpus.js";
import { DEFAULT_ALLOWED_ENGINES, type RunPolicy } from "./supervisor/run-policy.js";

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

const EngineSettingsFile = z
  .strictObject({
    probe: z.array(z.string().min(1)).min(1).optional(),
    command: z.array(z.string().min(1)).min(1).optional(),
    backend: z.enum(["cuda", "vulkan"]).optional(),
  })
  .optional();
const ENGINE_SETTINGS = Object.fromEntries(Engine.options.map((e) => [e, EngineSettingsFile])) as Record<
  Engine,
  typeof EngineSettingsFile
>;
type EnginesFile = { allow?: Engine[]; command_programs?: string[] } & Partial<Record<Engine, EngineSettings>>;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// a user or group name as /etc/passwd spells it, or a numeric id
const RunAsName = z
  .string()
  .regex(/^(?:[0-9]+|[A-Za-z_][A-Za-z0-9._-]*\$?)$/, "must be a user/group name or a numeric id")
  .max(64);

/** The per-engine settings of `engines` (without `allow` and `command_programs`). */
function settingsOf(engines: EnginesFile | undefined): Partial<Record<Engine, EngineSettings>> {
  return Object.fromEntries(Object.entries(engines ?? {}).filter(([k, v]) => isEngine(k) && v !== undefined));
}
const isEngine = (k: string): k is Engine => (Engine.options as readonly string[]).includes(k);

/**
 * What is probed: the engines agent.yaml lists settings for, else (`engines.allow` alone, or no `engines`) every
 * default probe; `engines: {}` probes none. Only allowed engines are probed, so a node never offers one it refuses.
 */
function probesOf(engines: EnginesFile | undefined) {
  const allowed = new Set<string>(engines?.allow ?? DEFAULT_ALLOWED_ENGINES);
  const settings = settingsOf(engines);
  const all =
    Object.keys(settings).length > 0 || (engines && !engines.allow)
      ? probesFor(settings)
      : DEFAULT_PROBES.map((p) => ({ ...p, command: [...p.command] }));
  return all.filter((p) => allowed.has(p.engine));
}

/** What this node agrees to run (agent/supervisor/run-policy.ts applies it). */
function runPolicyOf(engines: EnginesFile | undefined, envAllow: string[]): RunPolicy {
  const programs = engines?.command_programs;
  // the program agent.yaml itself puts in front of a `command` profile's args is the operator's own choice
  const own = engines?.command?.command?.[0];
  return {
    allow: engines?.allow ?? [...DEFAULT_ALLOWED_ENGINES],
    ...(programs ? { commandPrograms: own ? [...programs, own] : programs } : {}),
    envAllow,
  };
}

/** Settings for an engine `engines.allow` leaves out, or command_programs without `command`, are mistakes. */
function engineSettingsAllowed(e: EnginesFile, ctx: z.RefinementCtx) {
  const allowed: readonly string[] = e.allow ?? DEFAULT_ALLOWED_ENGINES;
  for (const k of Object.keys(settingsOf(e)))
    if (!allowed.includes(k))
      ctx.addIssue({ code: "custom", path: [k], message: `settings for ${k}, which engines.allow does not list` });
  if (e.command_programs && !allowed.includes("command"))
    ctx.addIssue({
      code: "custom",
      path: ["command_programs"],
      message: "set, but engines.allow does not list command",
    });
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
      .strictObject({
        allow: z.array(Engine).optional(),
        command_programs: z
          .array(Path.refine((p) => isAbsolute(p), "must be an absolute path"))
          .min(1)
          .optional(),
        ...ENGINE_SETTINGS,
      })
      .superRefine(engineSettingsAllowed)
      .optional(),
    env_allow: z.array(z.string().regex(ENV_NAME, "must be an environment variable name")).default([]),
    run_as: z.strictObject({ user: RunAsName, group: RunAsName.optional() }).optional(),
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
    imex_nodes_config: Path.default("/etc/nvidia-imex/nodes_config.cfg"),
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
    engineProbes: probesOf(c.engines),
    engineOptions: settingsOf(c.engines),
    runPolicy: runPolicyOf(c.engines, c.env_allow),
    runAs: c.run_as,
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
    imexNodesConfig: c.imex_nodes_config,
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
