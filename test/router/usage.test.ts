import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Store } from "../../api/db/client.js";
import { usage } from "../../api/db/schema.js";
import { createUsageRecorder } from "../../api/router/usage.js";
import { HOUR_MS } from "../../shared/schemas/usage.js";
import { migratedDb } from "../helpers/app.js";

let opened: Awaited<ReturnType<typeof migratedDb>>;
beforeAll(async () => {
  opened = await migratedDb();
});
afterAll(() => opened.close());
afterEach(async () => {
  vi.useRealTimers();
  await opened.store.write((tx) => tx.delete(usage));
});

const H = Date.UTC(2026, 10, 30, 12);

/** The store, counting write transactions; `failNext` makes the next ones fail. */
function countingStore() {
  const s = { writes: 0, failNext: 0 };
  const store: Store = {
    ...opened.store,
    write: (fn) => {
      s.writes++;
      if (s.failNext > 0) {
        s.failNext--;
        return Promise.reject(new Error("SQLITE_BUSY: database is locked"));
      }
      return opened.store.write(fn);
    },
  };
  return Object.assign(s, { store });
}

function captureLog() {
  const lines: string[] = [];
  return {
    lines,
    log: {
      info: (m: string) => lines.push(`info ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
      error: (m: string) => lines.push(`error ${m}`),
    },
  };
}

const rows = () => opened.db.select().from(usage).orderBy(usage.hourStart, usage.keyName, usage.model);

describe("createUsageRecorder", () => {
  it("sums many responses in memory and writes them in one transaction per flush", async () => {
    const c = countingStore();
    const rec = createUsageRecorder(c.store, { log: captureLog().log, flushMs: 3_600_000 });
    for (let i = 0; i < 1000; i++) rec.record("team-a", "llama", { promptTokens: 10, completionTokens: 2 }, H + i);
    for (let i = 0; i < 10; i++)
      rec.record("team-b", "llama", { promptTokens: 1, completionTokens: 1 }, H + HOUR_MS + i);
    rec.record("team-a", "qwen", { promptTokens: 5, completionTokens: 0 }, H + HOUR_MS - 1);
    expect(c.writes).toBe(0);
    expect(rec.pending()).toBe(3);
    await rec.flush();
    expect(c.writes).toBe(1);
    expect(rec.pending()).toBe(0);
    expect(await rows()).toEqual([
      { keyName: "team-a", model: "llama", hourStart: H, requests: 1000, promptTokens: 10_000, completionTokens: 2000 },
      { keyName: "team-a", model: "qwen", hourStart: H, requests: 1, promptTokens: 5, completionTokens: 0 },
      {
        keyName: "team-b",
        model: "llama",
        hourStart: H + HOUR_MS,
        requests: 10,
        promptTokens: 10,
        completionTokens: 10,
      },
    ]);
    await rec.flush();
    expect(c.writes).toBe(1); // nothing pending: no transaction

    // a later flush adds to the rows already there (as another instance's would)
    rec.record("team-a", "llama", { promptTokens: 1, completionTokens: 1 }, H + 5);
    await rec.close();
    expect(c.writes).toBe(2);
    expect((await rows())[0]).toMatchObject({ requests: 1001, promptTokens: 10_001, completionTokens: 2001 });
  });

  it("keeps the sums of a failed flush for the next one, logging one line", async () => {
    const c = countingStore();
    const { lines, log } = captureLog();
    const rec = createUsageRecorder(c.store, { log, flushMs: 3_600_000 });
    rec.record("k", "m", { promptTokens: 3, completionTokens: 4 }, H);
    c.failNext = 1;
    await expect(rec.flush()).rejects.toThrow(/SQLITE_BUSY/);
    expect(lines).toEqual(["warn router: usage flush failed; kept for the next one"]);
    rec.record("k", "m", { promptTokens: 1, completionTokens: 1 }, H);
    expect(rec.pending()).toBe(1);
    await rec.flush();
    expect(await rows()).toEqual([
      { keyName: "k", model: "m", hourStart: H, requests: 2, promptTokens: 4, completionTokens: 5 },
    ]);
    expect(lines).toHaveLength(1);
    await rec.close();
  });

  it("flushes on its timer and on close; close says what it could not write", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const c = countingStore();
    const { lines, log } = captureLog();
    const rec = createUsageRecorder(c.store, { log, flushMs: 10_000 });
    rec.record("k", "m", { promptTokens: 1, completionTokens: 1 }, H);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(c.writes).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    await vi.waitFor(() => expect(rec.pending()).toBe(0));
    expect(c.writes).toBe(1);
    await vi.advanceTimersByTimeAsync(50_000);
    expect(c.writes).toBe(1); // nothing pending, nothing written

    rec.record("k", "m", { promptTokens: 1, completionTokens: 1 }, H);
    c.failNext = 1;
    await vi.advanceTimersByTimeAsync(10_000);
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    rec.record("k", "m", { promptTokens: 1, completionTokens: 1 }, H);
    await rec.close();
    expect((await rows())[0]).toMatchObject({ requests: 3 });
    expect(vi.getTimerCount()).toBe(0);

    const failing = countingStore();
    const last = createUsageRecorder(failing.store, { log, flushMs: 10_000 });
    last.record("k", "m", { promptTokens: 1, completionTokens: 1 }, H);
    failing.failNext = 1;
    await last.close();
    expect(lines.at(-1)).toBe("error router: usage not written at shutdown; it is lost");
  });

  it("counts odd token numbers as whole, non-negative ones", async () => {
    const rec = createUsageRecorder(opened.store, { log: captureLog().log });
    rec.record("k", "m", { promptTokens: 2.6, completionTokens: -5 }, H);
    rec.record("k", "m", { promptTokens: Number.NaN, completionTokens: Infinity }, H);
    await rec.close();
    expect(await rows()).toEqual([
      { keyName: "k", model: "m", hourStart: H, requests: 2, promptTokens: 3, completionTokens: 0 },
    ]);
  });

  it("writes thousands of rows in one transaction", async () => {
    const c = countingStore();
    const rec = createUsageRecorder(c.store, { log: captureLog().log });
    for (let i = 0; i < 2500; i++) rec.record(`k${i}`, "m", { promptTokens: 1, completionTokens: 1 }, H);
    await rec.close();
    expect(c.writes).toBe(1);
    expect(await rows()).toHaveLength(2500);
  });
});
