// Which inference engines this node has, and their versions: each probed with a short timeout.
import type { Inventory } from "../../shared/schemas/inventory.js";
import { engines } from "../engines/index.js";
import type { EngineAdapter } from "../engines/types.js";
import type { Runner } from "./exec.js";

export type EngineProbe = { engine: string; command: string[] };

/** What is probed unless agent.yaml says otherwise: each adapter's version command, in registry order. */
export const DEFAULT_PROBES: EngineProbe[] = Object.values(engines as Record<string, EngineAdapter>).flatMap((a) =>
  a.version ? [{ engine: a.engine, command: [...a.version] }] : [],
);

/**
 * The version in a probe's output: what follows "version" when the output names it (llama.cpp's
 * "version: 6123 (abc)", "TensorRT-LLM version: 1.0.0"), else the first dotted version ("0.11.0", "0.5.2rc1").
 */
export function versionFrom(output: string): string | undefined {
  const named = /\bversion:?\s*v?(\d[\w.+-]*)/i.exec(output);
  if (named) return named[1];
  const dotted = /\b(\d+\.\d+(?:\.\d+)*(?:(?:a|b|rc|dev|post)\d+)?(?:[.+-][0-9A-Za-z.+-]+)?)/.exec(output);
  return dotted?.[1] ?? /\b(b\d{3,})\b/.exec(output)?.[1];
}

/** Runs every probe; an engine is present when its probe exits 0. Absent engines are not errors. */
export async function probeEngines(
  probes: EngineProbe[],
  run: Runner,
  timeoutMs: number,
): Promise<Inventory["engines"]> {
  const results = await Promise.all(
    probes.map(async (p) => ({ p, r: await run(p.command[0]!, p.command.slice(1), timeoutMs) })),
  );
  const versions: Record<string, string> = {};
  for (const { p, r } of results) {
    if (!r.ok) continue;
    versions[p.engine] = versionFrom(`${r.stdout}\n${r.stderr}`) ?? "unknown";
  }
  return { probed: probes.map((p) => p.engine), versions };
}
