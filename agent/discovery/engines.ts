// Which inference engines this node has, and their versions: each probed with a short timeout.
import type { Inventory } from "../../shared/schemas/inventory.js";
import { compareText } from "../../shared/sort.js";
import { engines } from "../engines/index.js";
import type { EngineAdapter } from "../engines/types.js";
import type { Runner } from "./exec.js";

/** One way to ask an engine its version. An engine may have several, tried in order until one exits 0. */
export type EngineProbe = { engine: string; command: string[] };

/** What is probed unless agent.yaml says otherwise: each adapter's version commands, in registry order. */
export const DEFAULT_PROBES: EngineProbe[] = Object.values(engines as Record<string, EngineAdapter>).flatMap(
  (a) => a.version?.map((command) => ({ engine: a.engine, command: [...command] })) ?? [],
);

/** Probes that run at once: each Python one starts an interpreter, and a node's CPUs may be busy serving. */
const PROBES_AT_ONCE = 2;

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

/**
 * Runs every engine's probes — engines two at a time, an engine's own probes in order until one exits 0. An engine is
 * present when one did; a probe that ran out of time leaves a warning (its engine may be installed but slow to answer),
 * so that "absent" is never said when it is not known.
 */
export async function probeEngines(
  probes: EngineProbe[],
  run: Runner,
  timeoutMs: number,
): Promise<Inventory["engines"]> {
  const byEngine = new Map<string, string[][]>();
  for (const p of probes) byEngine.set(p.engine, [...(byEngine.get(p.engine) ?? []), p.command]);
  const versions: Record<string, string> = {};
  const warnings: Record<string, string> = {};
  const queue = [...byEngine];
  async function worker() {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [engine, commands] = next;
      const timedOut: string[] = [];
      for (const command of commands) {
        const r = await run(command[0]!, command.slice(1), timeoutMs);
        if (r.ok) {
          versions[engine] = versionFrom(`${r.stdout}\n${r.stderr}`) ?? "unknown";
          break;
        }
        if (r.timedOut) timedOut.push(command.join(" ").slice(0, 160));
      }
      if (!(engine in versions) && timedOut.length)
        warnings[engine] =
          `no answer within ${timeoutMs / 1000} s from ${timedOut.join("; ")}: ${engine} may be installed; ` +
          `it is left out until a probe answers (give engines.${engine}.probe a faster command in agent.yaml)`;
    }
  }
  await Promise.all(Array.from({ length: Math.min(PROBES_AT_ONCE, queue.length) }, worker));
  return {
    probed: [...byEngine.keys()],
    versions: Object.fromEntries(Object.entries(versions).sort(([a], [b]) => compareText(a, b))),
    ...(Object.keys(warnings).length ? { warnings } : {}),
  };
}
