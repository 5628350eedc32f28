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
