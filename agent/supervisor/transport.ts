// Which transport a shard's NCCL chose, read from the engine's log as it grows: from where the log ended when the
// engine was started, a bounded read per watch, until the engine serves and the verdict is known. The verdict goes
// out with the shard's reports and lives in its state file, so an adopted engine keeps it.
import { open, stat } from "node:fs/promises";
import { usesNccl } from "../nccl/env.js";
import { createNcclReader } from "../nccl/parse.js";
import { judgeTransport } from "../nccl/verdict.js";
import type { LogCursor, Slot } from "./types.js";

/** At most this much of the log is read per watch (a chatty engine cannot make one pass slow). */
const READ_BYTES = 1 << 20;

/** A cursor at the log's current end (what the last run printed is not this run's). */
export async function cursorAtEnd(path: string): Promise<LogCursor> {
  const offset = await stat(path).then(
    (st) => st.size,
    () => 0, // no log yet
  );
  return { reader: createNcclReader(), offset, partial: "" };
}

/**
 * Reads what the log gained since the cursor into the cursor's reader, at most `maxBytes`; true when it read up to
 * the log's end (or there is no log). A log rotated since (capLog: its content moved to `<path>.1`, the file emptied)
 * has the rest of the old generation read first, then the new one from its start.
 */
export async function readOn(path: string, c: LogCursor, maxBytes = READ_BYTES): Promise<boolean> {
  let f;
  try {
    f = await open(path, "r");
  } catch {
    return true;
  }
  try {
    const { size } = await f.stat();
    if (size < c.offset) {
      await readOn(`${path}.1`, c, maxBytes);
      Object.assign(c, { offset: 0, partial: "" });
      return false;
    }
    const n = Math.min(maxBytes, size - c.offset);
    if (n <= 0) return true;
    const buf = Buffer.alloc(n);
    const { bytesRead } = await f.read(buf, 0, n, c.offset);
    c.offset += bytesRead;
    const lines = (c.partial + buf.subarray(0, bytesRead).toString("utf8")).split(/\r?\n/);
    c.partial = (lines.pop() ?? "").slice(-4096);
    for (const l of lines) c.reader.feed(l);
    return c.offset >= size;
  } finally {
    await f.close();
  }
}

/**
 * Reads on in the log of a live engine and judges again; when the verdict changed (to be reported), the log line that
 * says so. An adopted engine, whose start this agent did not see, is read from the log's beginning. What NCCL has not
 * said by then it will not say once the engine serves — or, for a `headless` rank (no HTTP: no serving to wait for),
 * once it has run for its startup timeout — nor when the profile sets NCCL_DEBUG itself.
 */
export async function observeTransport(
  s: Slot,
  path: string,
  now: number,
  headless = false,
): Promise<string | undefined> {
  if (!usesNccl(s.shard) || s.cursor?.done) return undefined;
  // an adopted engine already judged while serving is not read again
  if (!s.cursor && s.served && s.transport && s.transport.verdict !== "pending") return undefined;
  s.cursor ??= { reader: createNcclReader(), offset: 0, partial: "" };
  // what the engine printed before it served is read whole before the verdict is final
  const caughtUp = await readOn(path, s.cursor);
  const settled =
    caughtUp &&
    (!!s.served ||
      "NCCL_DEBUG" in s.shard.profile.env ||
      (headless && now - (s.startedAt ?? now) > s.shard.profile.startupTimeoutS * 1000));
  if (settled) s.cursor.done = true;
  const t = judgeTransport({ fabric: s.shard.fabric, hcas: s.shard.hcas }, s.cursor.reader.observation(), settled);
  if (caughtUp && headless && (t?.verdict === "ok" || t?.verdict === "degraded")) s.cursor.done = true;
  if (!t || JSON.stringify(t) === JSON.stringify(s.transport)) return undefined;
  s.transport = t;
  return `shard ${s.shard.shardId}: transport ${t.verdict}: ${t.reason ?? t.observed ?? t.expected}`;
}
