// Recent usage (the console's charts): outcomes summed per key, model and 5-minute bucket, written with the hourly
// usage in one transaction per flush, added to by every instance, and old buckets deleted.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../api/db/client.js";
import { usage, usageRecent } from "../../api/db/schema.js";
import { readRecentUsage } from "../../api/db/usage-recent.js";
import { createUsageRecorder } from "../../api/router/usage.js";
import { ttftBucket } from "../../api/router/usage-recent.js";
import { BUCKET_MS, RECENT_KEEP_MS } from "../../shared/schemas/usage.js";
import { migratedDb } from "../helpers/app.js";

let opened: Awaited<ReturnType<typeof migratedDb>>;
beforeAll(async () => {
  opened = await migratedDb();
});
afterAll(() => opened.close());
beforeEach(async () => {
  await opened.store.write(async (tx) => {
    await tx.delete(usage);
    await tx.delete(usageRecent);
  });
});

const B = Date.UTC(2026, 10, 30, 12, 5);
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

function counting() {
  const s = { writes: 0 };
  const store: Store = {
    ...opened.store,
    write: (fn) => {
      s.writes++;
      return opened.store.write(fn);
    },
  };
  return Object.assign(s, { store });
}

describe("recent usage", () => {
  it.each([
    [0, 0],
    [50, 0],
    [50.5, 1],
    [740, 4],
    [30_000, 8],
    [30_001, 9],
  ])("a first token after %d ms falls in bucket %d", (ms, i) => expect(ttftBucket(ms)).toBe(i));

  it("sums requests, errors, tokens and the TTFT histogram per key, model and bucket; one transaction a flush", async () => {
    const c = counting();
    const rec = createUsageRecorder(c.store, { log, flushMs: 0 });
    const u = { promptTokens: 10, completionTokens: 3 };
    for (let i = 0; i < 5; i++) rec.observe("team-a", "llama", { status: 200, ttftMs: 80, usage: u }, B + i);
    rec.observe("team-a", "llama", { status: 500, ttftMs: 3000 }, B + 10);
    rec.observe("team-a", "llama", { status: 502 }, B + 20); // failed upstream: no body, no TTFT
    rec.observe("team-a", "llama", { status: 499, ttftMs: 40 }, B + 30); // the client left: not an error
    rec.observe("team-a", "llama", { status: 429 }, B + BUCKET_MS); // the next bucket
    rec.record("team-a", "llama", u, B);
    expect(rec.pending()).toBe(3);
    await rec.flush();
    expect(c.writes).toBe(1);
    expect(await opened.db.select().from(usage)).toHaveLength(1);
    const rows = await readRecentUsage(opened.db, 0);
    expect(rows).toEqual([
      expect.objectContaining({ bucketStart: B, requests: 8, errors: 2, promptTokens: 50, completionTokens: 15 }),
      expect.objectContaining({ bucketStart: B + BUCKET_MS, requests: 1, errors: 1, ttft0: 0, ttft1: 0 }),
    ]);
    expect([rows[0]!.ttft0, rows[0]!.ttft1, rows[0]!.ttft6]).toEqual([1, 5, 1]);

    // another instance writing the same bucket adds to it
    const other = createUsageRecorder(opened.store, { log, flushMs: 0 });
    other.observe("team-a", "llama", { status: 200, ttftMs: 80 }, B + 99);
    await other.flush();
    const [first] = await readRecentUsage(opened.db, 0);
    expect(first).toMatchObject({ requests: 9, errors: 2, ttft1: 6 });
  });

  it("deletes buckets older than the retention during a flush, at most every 10 minutes", async () => {
    const rec = createUsageRecorder(opened.store, { log, flushMs: 0 });
    rec.observe("team-a", "llama", { status: 200 }, B - RECENT_KEEP_MS - BUCKET_MS);
    rec.observe("team-a", "llama", { status: 200 }, B - RECENT_KEEP_MS);
    await rec.flush(); // the latest request was old itself: both kept
    expect(await readRecentUsage(opened.db, 0)).toHaveLength(2);
    rec.observe("team-a", "llama", { status: 200 }, B);
    await rec.flush();
    expect((await readRecentUsage(opened.db, 0)).map((r) => r.bucketStart)).toEqual([B - RECENT_KEEP_MS, B]);
  });
});
