import { z } from "../z.js";

/** Free text from hardware tools: bounded so a runaway reader cannot fill the database. */
export const Text = (max = 256) => z.string().max(max);

export const NodeId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, "1-63 letters, digits, '.', '_' or '-', starting with a letter or digit")
  .openapi({ example: "gpu-node-01" });

/**
 * A map of at most `max` entries (the OpenAPI document shows `maxProperties`). The entries are counted before any is
 * read, so an oversized map costs one count and one error, not a check and an error per entry.
 */
export function Entries<K extends z.core.$ZodRecordKey, V extends z.ZodType>(key: K, value: V, max: number) {
  const record = z.record(key, value);
  return z
    .preprocess<unknown, typeof record, z.input<typeof record>>((v, ctx) => {
      if (v !== null && typeof v === "object" && Object.keys(v).length > max)
        ctx.addIssue({ code: "custom", message: `Too big: expected at most ${max} entries`, input: v });
      return v;
    }, record)
    .openapi({ maxProperties: max });
}

type Path = (string | number)[];
/** An id and the path of the field that holds it. */
export type IdAt = { id: string | number | undefined; path: Path };
export const idAt = (id: IdAt["id"], ...path: Path): IdAt => ({ id, path });

/** An issue for each id an earlier one already has, at its field, naming the first holder; undefined ids are skipped. */
export function repeats(what: string, ids: readonly IdAt[]): { path: Path; message: string }[] {
  const first = new Map<string | number, string>();
  const out: { path: Path; message: string }[] = [];
  for (const { id, path } of ids) {
    if (id === undefined) continue;
    const holder = first.get(id);
    if (holder === undefined) first.set(id, path.join("."));
    else out.push({ path, message: `${what} ${id} is used twice: ${holder} has it too` });
  }
  return out;
}

/** Labels of a node (and the selectors that match them): more than any fleet uses, few enough to match fast. */
export const MAX_LABELS = 64;

export const Labels = Entries(
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$/, "label keys are 1-63 letters, digits, '.', '_', '/' or '-'"),
  z.string().max(256),
  MAX_LABELS,
).openapi({ example: { pool: "prod", rack: "r12" } });

export const EpochMs = z
  .number()
  .int()
  .nonnegative()
  .openapi({ description: "Unix time in milliseconds", example: 1764524400000 });

/** Shard lifecycle as the agent reports it; unknown states on the wire are read as `failed`. */
export const ShardState = z
  .enum(["pending", "starting", "loading", "ready", "draining", "stopped", "failed"])
  .openapi("ShardState");
export type ShardState = z.infer<typeof ShardState>;

/** Reads a shard state from the wire: anything unknown is `failed`, never healthy. */
export function readShardState(s: string): ShardState {
  const parsed = ShardState.safeParse(s);
  return parsed.success ? parsed.data : "failed";
}
