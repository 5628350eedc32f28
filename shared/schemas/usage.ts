import { z } from "../z.js";
import { EpochMs } from "./common.js";

/** Usage is counted per hour: rows are keyed by the hour's start. */
export const HOUR_MS = 3_600_000;

const Count = z.number().int().nonnegative();

const Sums = {
  requests: Count.openapi({ description: "responses counted", example: 120 }),
  promptTokens: Count.openapi({ description: "prompt (input) tokens the engines reported", example: 48000 }),
  completionTokens: Count.openapi({ description: "completion (output) tokens the engines reported", example: 9600 }),
};

export const UsageRow = z
  .object({
    key: z.string().openapi({ description: "the API key's name", example: "team-search" }),
    model: z
      .string()
      .openapi({ description: "the served model name requested", example: "meta-llama/Llama-3.1-8B-Instruct" }),
    hourStart: EpochMs.openapi({
      description: "the start of the hour the responses finished in (Unix ms)",
      example: 1764522000000,
    }),
    ...Sums,
  })
  .openapi("UsageRow");

export const UsageTotals = z.object(Sums).openapi("UsageTotals");

export const UsageReport = z
  .object({
    items: z.array(UsageRow).openapi({ description: "by hour, then key, then model" }),
    totals: UsageTotals.openapi({ description: "the sums of `items`" }),
  })
  .openapi("UsageReport");

/** Recent usage (the console's charts) is counted per 5-minute bucket: rows are keyed by the bucket's start. */
export const BUCKET_MS = 300_000;

/** Recent usage older than this is deleted by the router's flushes. */
export const RECENT_KEEP_MS = 2 * 24 * HOUR_MS;

/**
 * The upper bounds (ms, inclusive) of the time-to-first-token histogram; one more bucket counts what took longer. Fixed,
 * so that buckets written by any number of instances add up.
 */
export const TTFT_BOUNDS_MS = [50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000] as const;
