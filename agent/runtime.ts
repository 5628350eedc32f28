// Wiring of the agent's parts from its configuration: the client (with TLS), discovery, and the supervisor over
// the real process, probe and engine functions. Only bin/agent.ts calls it.
import { readFile } from "node:fs/promises";
import { Agent, type Dispatcher } from "undici";
import type { StartShard } from "../shared/schemas/assignment.js";
import type { Inventory } from "../shared/schemas/inventory.js";
import { createClient } from "./client.js";
import type { AgentConfig } from "./config.js";
import { run } from "./discovery/exec.js";
import { type DiscoverOptions, discover } from "./discovery/index.js";
import { loadNvml } from "./discovery/nvml-koffi.js";
import { readVulkanDevices } from "./discovery/vulkan.js";
import { adapterFor, launch } from "./engines/index.js";
import { adoptFromStateDir } from "./supervisor/adopt.js";
import { engineInflight, probeHost, probeHttp } from "./supervisor/probe.js";
import { isSameProcess } from "./supervisor/proc.js";
import { portFree, spawnEngine, stopEngine } from "./supervisor/process.js";
import { createSupervisor } from "./supervisor/reconcile.js";
import { loadRunAs, runAsNotice } from "./supervisor/run-as.js";
import { policyNotice } from "./supervisor/run-policy.js";

/** An undici dispatcher for the control plane's TLS settings (CA, client certificate, or no verification for labs). */
export async function tlsDispatcher(tls?: {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  insecure?: boolean;
}): Promise<Dispatcher | undefined> {
  if (!tls || (!tls.caFile && !tls.certFile && !tls.keyFile && !tls.insecure)) return undefined;
  const [ca, cert, key] = await Promise.all(
    [tls.caFile, tls.certFile, tls.keyFile].map((f) => (f ? readFile(f, "utf8") : undefined)),
  );
  return new Agent({ connect: { ca, cert, key, rejectUnauthorized: !tls.insecure } });
}

/** Discovery's options from agent.yaml (what `llmgw agent`, `agent inventory` and `doctor` all discover with). */
export function discoverOptions(cfg: AgentConfig): DiscoverOptions {
  return {
    nvidiaSmi: cfg.nvidiaSmi,
    nvml: cfg.nvml ? () => loadNvml() : undefined,
    ibRoot: cfg.ibRoot,
    imexCtl: cfg.imexCtl,
    imexChannelsDir: cfg.imexChannelsDir,
    storagePaths: cfg.storagePaths,
    weightsDirs: cfg.weightsDirs,
    engineProbes: cfg.engineProbes,
    fabrics: cfg.fabrics,
    classOverrides: cfg.classOverrides,
    slowdownC: cfg.slowdownC,
    engineBackends: Object.fromEntries(
      Object.entries(cfg.engineOptions).flatMap(([e, o]) => (o?.backend ? [[e, o.backend]] : [])),
    ),
  };
}

/** The discovery this agent runs at start and on its check timer. */
export function discoveryOf(cfg: AgentConfig, ownPids: () => ReadonlySet<number>) {
  return () => discover({ ...discoverOptions(cfg), ownPids: ownPids() });
}

/** Each card's UUID by its index (how llama.cpp's Vulkan build is given its cards, see vulkanDevicesOf). */
export const cardUuidsOf = (inv: Inventory): Record<number, string> =>
  Object.fromEntries(inv.gpus.map((g) => [g.index, g.uuid]));

/** What the supervisor learns from the rest of the agent: the latest discovery's cards, the router's counts. */
export type SupervisorLinks = {
  /** Each card's UUID by index, from the latest discovery that saw GPUs. */
  cardUuids(): Record<number, string>;
  /** The router's count of requests outstanding to the engine on `port`; undefined when it cannot be asked. */
  routerInflight(port: number): Promise<number | undefined>;
  /** This node's address, for `{nodeAddr}` in profiles. */
  nodeAddr?: string;
  /** The agent's PATH, which engines inherit: where a `command` program is looked up. */
  searchPath?: string;
  /** The engines' versions, from the latest discovery. */
  engineVersions?(): Record<string, string>;
};

/** The Vulkan loader's devices, read once at start when llama.cpp is the Vulkan build here; logs why they are not. */
async function vulkanDevicesOf(cfg: AgentConfig, log: (line: string) => void) {
  if (cfg.engineOptions.llamacpp?.backend !== "vulkan") return undefined;
  const r = await readVulkanDevices(run, 10_000);
  if (r.error) log(`${r.error.source}: ${r.error.message}`);
  if (!r.devices) log("Vulkan devices unknown: llama.cpp's GGML_VK_VISIBLE_DEVICES gets the card indices as they are");
  return r.devices;
}

/** The supervisor with every engine found alive in the state dir adopted; logs what it found. */
export async function supervisorOf(cfg: AgentConfig, log: (line: string) => void, links: SupervisorLinks) {
  const adopted = await adoptFromStateDir(cfg.stateDir);
  for (const p of adopted.problems) log(`state dir: ${p}`);
  for (const r of adopted.gone) log(`shard ${r.shard.shardId}: its engine (pid ${r.pid}) is gone; forgetting it`);
  for (const r of adopted.alive) log(`shard ${r.shard.shardId}: adopted running engine pid ${r.pid}`);
  const host = probeHost(cfg.bindHost);
  const vulkanDevices = await vulkanDevicesOf(cfg, log);
  const runAs = cfg.runAs && (await loadRunAs(cfg.runAs));
  if (runAs) log(runAsNotice(runAs, { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 }));
  log(policyNotice(cfg.runPolicy));
  const engineOptions = (s: StartShard) => {
    const version = links.engineVersions?.()[s.profile.engine];
    return {
      host: cfg.bindHost,
      ...(links.nodeAddr ? { nodeAddr: links.nodeAddr } : {}),
      ...(version ? { version } : {}),
      ...cfg.engineOptions[s.profile.engine],
      ...(s.profile.engine === "llamacpp" && vulkanDevices ? { vulkanDevices, cardUuids: links.cardUuids() } : {}),
    };
  };
  const supervisor = createSupervisor(
    {
      stateDir: cfg.stateDir,
      restartLimit: cfg.restartLimit,
      restartBackoff: cfg.restartBackoff,
      stopGraceMs: cfg.stopGraceMs,
      drainTimeoutMs: cfg.drainTimeoutMs,
      adoptGraceMs: cfg.adoptGraceMs,
      logMaxBytes: cfg.logMaxBytes,
      now: Date.now,
      log,
      policy: { ...cfg.runPolicy, ...(links.searchPath ? { searchPath: links.searchPath } : {}) },
      ops: {
        launch: (s) => launch(s, engineOptions(s)),
        adapter: (s) => adapterFor(s.profile.engine),
        spawn: (argv, env, logFile) => spawnEngine(argv, env, logFile, runAs),
        stop: stopEngine,
        alive: isSameProcess,
        probe: (port, path) => probeHttp(host, port, path),
        // the engine's own count where it says, else the router's
        inflight: async (s) =>
          (await engineInflight(host, s.httpPort, adapterFor(s.profile.engine))) ?? links.routerInflight(s.httpPort),
        portFree: (port) => portFree(cfg.bindHost, port),
      },
    },
    adopted.alive,
  );
  return supervisor;
}

/** The control plane client for this agent. */
export async function clientOf(server: string, cfg: AgentConfig) {
  return createClient({ server, dispatcher: await tlsDispatcher(cfg.tls) });
}
