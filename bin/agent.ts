// `llmgw agent inventory`: discovery as the scheduler would see it, as a table or the exact JSON the agent registers.
import { defaultAgentConfig, loadAgentConfig } from "../agent/config.js";
import { discover } from "../agent/discovery/index.js";
import { type IdentityFlags, resolveIdentity } from "../agent/identity.js";
import { formatInventory } from "../agent/inventory.js";
import { runLoop } from "../agent/loop.js";
import { runOnce } from "../agent/once.js";
import { cardUuidsOf, clientOf, discoverOptions, discoveryOf, supervisorOf } from "../agent/runtime.js";
import { openSession, type Session } from "../agent/session.js";
import { pidsInGroups } from "../agent/supervisor/proc.js";
import { createNodeLogger, type Logger } from "../shared/log-node.js";

export type InventoryFlags = {
  json?: boolean;
  nvidiaSmi?: string;
  ibRoot?: string;
  gpu?: boolean;
  nvml?: boolean;
  config?: string;
};

/**
 * Prints this node's inventory; returns the exit code (2 for a bad agent.yaml, else 0 — failed sources are warnings).
 */
export async function runInventory(flags: InventoryFlags): Promise<number> {
  let cfg;
  try {
    cfg = flags.config ? await loadAgentConfig(flags.config) : defaultAgentConfig();
  } catch (e) {
    process.stderr.write(`llmgw: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  const overridden = {
    ...cfg,
    nvidiaSmi: flags.nvidiaSmi ?? cfg.nvidiaSmi,
    ibRoot: flags.ibRoot ?? cfg.ibRoot,
    nvml: flags.nvml ?? cfg.nvml,
  };
  const inv = await discover({ ...discoverOptions(overridden), noGpu: flags.gpu === false });
  process.stdout.write(flags.json ? `${JSON.stringify(inv, null, 2)}\n` : formatInventory(inv));
  return 0;
}

export type AgentFlags = IdentityFlags & { config?: string; once?: boolean };

let logger: Logger | undefined;
/**
 * The agent's parts log plain lines; here each becomes a structured one with the node's id and, for a shard's line
 * (`shard <id>: …`), its shard id — a failure or a restart to come at warn.
 */
const log = (line: string) => {
  logger ??= createNodeLogger("agent");
  const shard = /^shard ([^\s:]+): /.exec(line)?.[1];
  const warn = /^shard [^\s:]+: (failed|pending \()/.test(line);
  (warn ? logger.warn : logger.info)(line, shard ? { shardId: shard } : undefined);
};

/** `llmgw agent`: runs the node agent until SIGTERM/SIGINT (engines keep running), or one sync with --once. */
export async function runAgent(flags: AgentFlags): Promise<number> {
  let cfg, id;
  try {
    cfg = flags.config ? await loadAgentConfig(flags.config) : defaultAgentConfig();
    id = resolveIdentity(cfg, flags);
    logger = createNodeLogger("agent").child({ nodeId: id.nodeId });
  } catch (e) {
    process.stderr.write(`llmgw: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  if (cfg.tls?.insecure)
    logger.warn(
      "agent.yaml tls.insecure is set: the control plane's certificate is NOT verified, so anyone on the network path can impersonate it and read the node token; set tls.ca_file instead",
    );
  try {
    const client = await clientOf(id.server, cfg);
    let cards: Record<number, string> = {};
    let versions: Record<string, string> = {};
    let session: Session | undefined;
    const supervisor = await supervisorOf(cfg, log, {
      nodeAddr: id.mgmtAddr,
      cardUuids: () => cards,
      engineVersions: () => versions,
      ...(process.env.PATH ? { searchPath: process.env.PATH } : {}),
      routerInflight: async (port) => {
        const token = session?.token();
        if (!token) return undefined;
        return (await client.routerInflight(id.nodeId, port, token).catch(() => null)) ?? undefined;
      },
    });
    const discoverNode = discoveryOf(cfg, () => pidsInGroups(new Set(supervisor.running().map((s) => s.pid!))));
    const discover = async () => {
      const inv = await discoverNode();
      if (inv.gpus.length) cards = cardUuidsOf(inv);
      versions = inv.engines.versions ?? {};
      return inv;
    };
    session = await openSession({ cfg, id, client, log, now: Date.now });
    const deps = { nodeId: id.nodeId, session, client, supervisor, discover, log };
    if (flags.once) {
      log(await runOnce(deps));
      return 0;
    }
    const stop = new AbortController();
    const onSignal = (sig: string) => {
      log(`${sig}: stopping the agent; engines keep running`);
      stop.abort();
    };
    process.once("SIGTERM", () => onSignal("SIGTERM"));
    process.once("SIGINT", () => onSignal("SIGINT"));
    log(
      `agent ${id.nodeId} starting: control plane ${id.server}, state dir ${cfg.stateDir}, management address ${id.mgmtAddr}`,
    );
    await runLoop({ ...deps, checkIntervalMs: cfg.checkIntervalMs }, stop.signal);
    return 0;
  } catch (e) {
    process.stderr.write(`llmgw: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}\n`);
    return 1;
  }
}
