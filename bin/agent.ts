// `llmgw agent inventory`: discovery as the scheduler would see it, as a table or the exact JSON the agent registers.
import { defaultAgentConfig, loadAgentConfig } from "../agent/config.js";
import { discover } from "../agent/discovery/index.js";
import { loadNvml } from "../agent/discovery/nvml-koffi.js";
import { formatInventory } from "../agent/inventory.js";

export type InventoryFlags = { json?: boolean; nvidiaSmi?: string; ibRoot?: string; gpu?: boolean; nvml?: boolean; config?: string };

/** Prints this node's inventory; returns the exit code (2 for a bad agent.yaml, else 0 — failed sources are warnings). */
export async function runInventory(flags: InventoryFlags): Promise<number> {
  let cfg;
  try {
    cfg = flags.config ? await loadAgentConfig(flags.config) : defaultAgentConfig();
  } catch (e) {
    process.stderr.write(`llmgw: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  const inv = await discover({
    nvidiaSmi: flags.nvidiaSmi ?? cfg.nvidiaSmi,
    noGpu: flags.gpu === false,
    nvml: flags.nvml ?? cfg.nvml ? () => loadNvml() : undefined,
    ibRoot: flags.ibRoot ?? cfg.ibRoot,
    imexCtl: cfg.imexCtl,
    imexChannelsDir: cfg.imexChannelsDir,
    storagePaths: cfg.storagePaths,
    weightsDirs: cfg.weightsDirs,
    engineProbes: cfg.engineProbes,
    fabrics: cfg.fabrics,
    classOverrides: cfg.classOverrides,
  });
  process.stdout.write(flags.json ? `${JSON.stringify(inv, null, 2)}\n` : formatInventory(inv));
  return 0;
}
