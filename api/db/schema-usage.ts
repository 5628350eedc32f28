// The router's usage tables (the rest of the schema is schema.ts, which re-exports these): hourly sums per key and
// model, and the 5-minute buckets the console charts.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Tokens and requests the router counted, per key, served model and hour; kept when a key is deleted. */
export const usage = sqliteTable(
  "usage",
  {
    keyName: text("key_name").notNull(),
    model: text("model").notNull(),
    /** The start of the hour, in ms. */
    hourStart: integer("hour_start").notNull(),
    requests: integer("requests").notNull(),
    promptTokens: integer("prompt_tokens").notNull(),
    completionTokens: integer("completion_tokens").notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyName, t.model, t.hourStart] }), index("usage_hour").on(t.hourStart)],
);

/**
 * Recent usage per key, served model and 5-minute bucket, for the console's charts: requests, errors and tokens, and
 * time to first token as a histogram (`ttft_<i>` counts responses within TTFT_BOUNDS_MS[i], the last one those over).
 * Rows are added to by every instance's flush; flushes delete buckets older than RECENT_KEEP_MS.
 */
export const usageRecent = sqliteTable(
  "usage_recent",
  {
    keyName: text("key_name").notNull(),
    model: text("model").notNull(),
    /** The start of the 5-minute bucket, in ms. */
    bucketStart: integer("bucket_start").notNull(),
    requests: integer("requests").notNull(),
    /** Answered with a status of 400 or more, or failed upstream (a client that went away is not an error). */
    errors: integer("errors").notNull(),
    promptTokens: integer("prompt_tokens").notNull(),
    completionTokens: integer("completion_tokens").notNull(),
    ttft0: integer("ttft_0").notNull().default(0),
    ttft1: integer("ttft_1").notNull().default(0),
    ttft2: integer("ttft_2").notNull().default(0),
    ttft3: integer("ttft_3").notNull().default(0),
    ttft4: integer("ttft_4").notNull().default(0),
    ttft5: integer("ttft_5").notNull().default(0),
    ttft6: integer("ttft_6").notNull().default(0),
    ttft7: integer("ttft_7").notNull().default(0),
    ttft8: integer("ttft_8").notNull().default(0),
    ttft9: integer("ttft_9").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.keyName, t.model, t.bucketStart] }), index("usage_recent_bucket").on(t.bucketStart)],
);
