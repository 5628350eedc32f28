// Why an engine stopped when nobody asked it to: what the agent reports with a shard's state, what the control plane
// keeps per shard (the last one), and the one line every view (ctl, console, API) shows for it.
import { z } from "../z.js";
import { Text } from "./common.js";

/** Lines of an engine's log kept with a failure. */
export const LOG_TAIL_LINES = 20;

export const ShardFailure = z
  .strictObject({
    reason: Text(512).openapi({
      description: "what happened: `exit 1`, `killed by SIGKILL`, `not ready within 600 s (startup timeout)` …",
      example: "exit 1",
    }),
    exitCode: z.number().int().optional(),
    signal: Text(32).optional(),
    ranS: z.number().int().nonnegative().optional().openapi({ description: "how long the engine ran, in seconds" }),
    restart: z.number().int().nonnegative().openapi({ description: "which failure in a row this is (1 = the first)" }),
    restartLimit: z.number().int().nonnegative(),
    gaveUp: z.boolean().openapi({ description: "past the restart limit: the shard stays failed" }),
    logTail: z
      .array(Text(512))
      .max(LOG_TAIL_LINES)
      .openapi({ description: `the last lines (at most ${LOG_TAIL_LINES}) of the engine's log, oldest first` }),
    at: z.number().int().nonnegative().openapi({ description: "when, in ms since the epoch" }),
  })
  .openapi("ShardFailure");
export type ShardFailure = z.infer<typeof ShardFailure>;

/** The last log line worth showing: the final non-blank one. */
export function lastLogLine(f: Pick<ShardFailure, "logTail">): string | undefined {
  for (let i = f.logTail.length - 1; i >= 0; i--) if (f.logTail[i]!.trim()) return f.logTail[i]!.trim();
  return undefined;
}

/** One line for a failure: "exit 1 after 3 s (restart 5 of 5): <last log line>". */
export function failureText(f: ShardFailure): string {
  const ran = f.ranS === undefined ? "" : ` after ${f.ranS} s`;
  // restart 0: it could not be started at all, and is not retried
  const count =
    f.restart === 0
      ? ""
      : f.gaveUp
        ? ` (gave up after ${f.restartLimit} restart${f.restartLimit === 1 ? "" : "s"})`
        : ` (restart ${f.restart} of ${f.restartLimit})`;
  const last = lastLogLine(f);
  return `${f.reason}${ran}${count}${last ? `: ${last}` : ""}`;
}

/** A deployment whose replicas keep failing past their restart limit (kept on its row; see api/placement/failing.ts). */
export type Failing = {
  /** Replicas in a row that failed past their restart limit, with none of the deployment ready since. */
  count: number;
  /** The last failure, as failureText says it. */
  reason: string;
  /** When the first of them failed. */
  since: number;
  /** No new replica is placed before this. */
  retryAt: number;
  /** Placement held a replica back for it: the liveness sweep asks for placement once retryAt has passed. */
  waiting?: boolean;
};
