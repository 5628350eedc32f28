// `llmgw doctor`: every check over the gathered input, the report as a person reads it, and the exit status.
import type { DoctorCheck, DoctorReport } from "../../shared/schemas/doctor.js";
import { table } from "../inventory.js";
import { fabricChecks } from "./fabric-checks.js";
import { gpuChecks } from "./gpu-checks.js";
import type { DoctorInput } from "./input.js";
import { nodeChecks } from "./node-checks.js";

/** Runs every check, in a fixed order: driver and cards, fabrics, engines, control plane. */
export function runChecks(input: DoctorInput): DoctorReport {
  const checks: DoctorCheck[] = [...gpuChecks(input), ...fabricChecks(input), ...nodeChecks(input)];
  const summary = { ok: 0, warn: 0, fail: 0, skip: 0 };
  for (const c of checks) summary[c.status]++;
  return { checks, summary };
}

const SHOWN = { ok: "ok", warn: "WARN", fail: "FAIL", skip: "skip" } as const;

/** The report as a table (check, status, finding), each fix on the line below its finding, then the counts. */
export function formatDoctor(report: DoctorReport): string {
  const rows = [["CHECK", "STATUS", "FINDING"]];
  for (const c of report.checks) {
    rows.push([c.id, SHOWN[c.status], c.finding]);
    if (c.fix) rows.push(["", "", `fix: ${c.fix}`]);
  }
  const s = report.summary;
  const verdict = s.fail
    ? "this node has problems that keep work off it"
    : s.warn
      ? "this node can take work; see the warnings"
      : "this node is ready";
  return `${table(rows, "").join("\n")}\n\n${report.checks.length} checks: ${s.ok} ok, ${s.warn} warn, ${s.fail} fail, ${s.skip} skipped — ${verdict}\n`;
}

/** 1 when any check failed, else 0 (2, for a bad agent.yaml or flag, is decided before any check runs). */
export function exitCodeOf(report: DoctorReport): 0 | 1 {
  return report.summary.fail ? 1 : 0;
}
