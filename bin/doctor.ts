// `llmgw doctor`: checks this node as the agent and the scheduler depend on it, as a table or JSON.
import { defaultAgentConfig, loadAgentConfig } from "../agent/config.js";
import { exitCodeOf, formatDoctor, runChecks } from "../agent/doctor/checks.js";
import { gatherDoctorInput } from "../agent/doctor/gather.js";
import { DoctorReport } from "../shared/schemas/doctor.js";
import { z } from "../shared/z.js";

export type DoctorFlags = { json?: boolean; config?: string; server?: string; nvidiaSmi?: string; ibRoot?: string };

/**
 * Runs every check and prints the report; returns 0 (nothing failed), 1 (a check failed) or 2 (bad agent.yaml or flag).
 */
export async function runDoctor(flags: DoctorFlags): Promise<number> {
  let cfg;
  try {
    if (flags.server !== undefined && !z.url({ protocol: /^https?$/ }).safeParse(flags.server).success)
      throw new Error(`--server ${flags.server}: not an http(s) URL`);
    cfg = flags.config ? await loadAgentConfig(flags.config) : defaultAgentConfig();
  } catch (e) {
    process.stderr.write(`llmgw: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  const input = await gatherDoctorInput({
    cfg,
    server: flags.server,
    nvidiaSmi: flags.nvidiaSmi,
    ibRoot: flags.ibRoot,
  });
  const report = DoctorReport.parse(runChecks(input));
  process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
  return exitCodeOf(report);
}
