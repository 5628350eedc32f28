import { z } from "../z.js";

/** Free text from hardware tools: bounded so a runaway reader cannot fill the database. */
export const Text = (max = 256) => z.string().max(max);

export const NodeId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, "1-63 letters, digits, '.', '_' or '-', starting with a letter or digit")
  .openapi({ example: "gpu-node-01" });

export const Labels = z
  .record(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$/, "label keys are 1-63 letters, digits, '.', '_', '/' or '-'"),
    z.string().max(256),
  )
  .openapi({ example: { pool: "prod", rack: "r12" } });

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
