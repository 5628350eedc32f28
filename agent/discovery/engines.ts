// Which inference engines this node has, and their versions: each probed with a short timeout.
import type { Inventory } from "../../shared/schemas/inventory.js";
import type { Runner } from "./exec.js";

export type EngineProbe = { engine: string; command: string[] };

/** What is probed unless agent.yaml says otherwise. */
export const DEFAULT_PROBES: EngineProbe[] = [
  { engine: "vllm", command: ["vllm", "--version"] },
  { engine: "sglang", command: ["python3", "-c", "import sglang; print(sglang.__version__)"] },
  { engine: "llamacpp", command: ["llama-server", "--version"] },
  { engine: "trtllm", command: ["trtllm-serve", "--version"] },
];

/** The first version-looking token of a probe's output ("0.11.0", "b6123", "version: 6123 (abc)"). */
export function versionFrom(output: string): string | undefined {
  const m = /(\d+\.\d+(?:\.\d+)?(?:[.+-][0-9A-Za-z.+-]+)?)/.exec(output) ?? /version:?\s*(\S+)/i.exec(output) ?? /\b(b\d{3,})\b/.exec(output);
  return m?.[1];
}

/** Runs every probe; an engine is present when its probe exits 0. Absent engines are not errors. */
export async function probeEngines(probes: EngineProbe[], run: Runner, timeoutMs: number): Promise<Inventory["engines"]> {
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
