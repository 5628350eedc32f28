// YAML files checked by a zod schema (agent.yaml, the simulator's scenarios): one Error that lists every bad key.
import { parse } from "yaml";
import type { z } from "./z.js";

/** Parses YAML `text` with `schema`; throws one Error naming `source` and every bad key by its path. */
export function parseYamlWith<S extends z.ZodType>(
  schema: S,
  text: string,
  source: string,
  what = "invalid configuration",
): z.infer<S> {
  let raw: unknown;
  try {
    raw = parse(text) ?? {};
  } catch (e) {
    throw new Error(`${source}: not valid YAML: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`);
  }
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const lines = r.error.issues.flatMap((i) =>
    i.code === "unrecognized_keys"
      ? i.keys.map((k) => `${[...i.path, k].join(".")}: unknown key`)
      : [`${i.path.join(".") || "(top level)"}: ${i.message}`],
  );
  throw new Error(`${source}: ${what}:\n${lines.map((l) => `  ${l}`).join("\n")}`);
}
