import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Ask, createFairQueue, type Slot, type Waited } from "../../api/router/fair-queue.js";
import { manualTimers, TestCancel } from "../helpers/fair-clock.js";

const setup = (timeoutMs = 30_000) => {
  const clock = manualTimers();
  const q = createFairQueue({ now: clock.now, timeoutMs, setTimer: clock.setTimer });
  return { clock, q };
};
const ask = (key: string, o: Partial<Ask> = {}): Ask => ({ key, model: "m", capacity: 1, ...o });
/** Lets the promise callbacks of granted waiters run. */
const settle = () => new Promise((ok) => setImmediate(ok));
const slotOf = (w: Waited | undefined): Slot => {
  if (!w || !("slot" in w)) throw new Error(`no slot: ${JSON.stringify(w)}`);
  return w.slot;
};

describe("the fair queue", () => {
  it("gives slots at once up to the model's capacity, then makes requests wait", () => {
    const { q } = setup();
    const a = q.tryAcquire(ask("a", { capacity: 2 }));
    const b = q.tryAcquire(ask("b", { capacity: 2 }));
    expect(a && b).toBeTruthy();
    expect(q.tryAcquire(ask("c", { capacity: 2 }))).toBeUndefined();
    expect(q.active("m")).toBe(2);
  });

  it("serves the waiting keys round-robin: a key with many waiting gets one slot in turn with a key that has one", async () => {
    const { q } = setup();
    const holder = q.tryAcquire(ask("flood"))!;
    const order: string[] = [];
    const waits: Promise<void>[] = [];
    const enqueue = (key: string) =>
      waits.push(
        q.wait(ask(key), new TestCancel()).then((w) => {
          order.push(key);
          slotOf(w).release();
        }),
      );
    for (let i = 0; i < 5; i++) enqueue("flood");
    enqueue("quiet");
    enqueue("quiet");
    enqueue("other");
    expect(q.waiting("m")).toBe(8);
    holder.release();
    await Promise.all(waits);
    // FIFO would give flood ×5 first; each key's own requests keep their order
    expect(order).toEqual(["flood", "quiet", "other", "flood", "quiet", "flood", "flood", "flood"]);
    expect([q.active(), q.waiting()]).toEqual([0, 0]);
  });

  it("holds a key to its maxConcurrent over every model, without blocking other keys", async () => {
    const { q } = setup();
    const big = { capacity: 10, limit: 2 };
    const [a1, a2] = [q.tryAcquire(ask("a", big))!, q.tryAcquire(ask("a", { ...big, model: "n" }))!];
    expect(q.tryAcquire(ask("a", big))).toBeUndefined();
    const waiting = q.wait(ask("a", big), new TestCancel());
    // the model has room: another key is not held behind a's waiter
    expect(q.tryAcquire(ask("b", big))).toBeDefined();
    a2.release(); // a's slot on model n frees: its waiter on m goes
    const s = slotOf(await waiting);
    expect(q.active("m")).toBe(3);
    for (const x of [a1, s]) x.release();
  });

  it("refuses a waiter on its deadline, saying what was full; 0 refuses at once", async () => {
    const { clock, q } = setup(30_000);
    q.tryAcquire(ask("a", { limit: 1, capacity: 5 }));
    q.tryAcquire(ask("b", { capacity: 2 }));
    const byKey = q.wait(ask("a", { limit: 1, capacity: 2 }), new TestCancel());
    const byModel = q.wait(ask("c", { capacity: 2 }), new TestCancel());
    clock.advance(29_999);
    expect(q.waiting()).toBe(2);
    clock.advance(1);
    expect(await byKey).toEqual({ refused: "timeout", by: "key", waitedMs: 30_000 });
    expect(await byModel).toEqual({ refused: "timeout", by: "model", waitedMs: 30_000 });
    expect([q.waiting(), clock.pending()]).toEqual([0, 0]);

    const now = setup(0);
    now.q.tryAcquire(ask("a"));
    expect(await now.q.wait(ask("b"), new TestCancel())).toMatchObject({ refused: "timeout", by: "model" });
    expect(now.q.waiting()).toBe(0);
  });

  it("lets a request whose client went away leave the queue; the slot goes to the next one", async () => {
    const { clock, q } = setup();
    const holder = q.tryAcquire(ask("a"))!;
    const gone = new TestCancel();
    const left = q.wait(ask("b"), gone);
    const next = q.wait(ask("c"), new TestCancel());
    clock.advance(1000);
    gone.abort();
    expect(await left).toEqual({ refused: "aborted", waitedMs: 1000 });
    expect(q.waiting()).toBe(1);
    holder.release();
    slotOf(await next).release();
    expect([q.active(), clock.pending(), gone.listenerCount("abort")]).toEqual([0, 0, 0]);
    const already = new TestCancel();
    already.abort();
    expect(await q.wait(ask("d"), already)).toEqual({ refused: "aborted", waitedMs: 0 });
  });

  it("releases a slot once however often release is called", async () => {
    const { q } = setup();
    const s = q.tryAcquire(ask("a", { limit: 1 }))!;
    const w1 = q.wait(ask("b"), new TestCancel());
    const w2 = q.wait(ask("c"), new TestCancel());
    s.release();
    s.release();
    await settle();
    expect([q.active("m"), q.waiting("m")]).toEqual([1, 1]);
    slotOf(await w1).release();
    slotOf(await w2).release();
    expect(q.active()).toBe(0);
    // and the key's own count came back to zero: it may take a slot again
    expect(q.tryAcquire(ask("a", { limit: 1 }))).toBeDefined();
  });

  it("serves its waiters first when the model gets more replicas", async () => {
    const { q } = setup();
    q.tryAcquire(ask("a"));
    const waiting = q.wait(ask("b"), new TestCancel());
    expect(q.tryAcquire(ask("c", { capacity: 2 }))).toBeUndefined();
    expect(await waiting).toHaveProperty("slot");
  });

  it("never exceeds a model's or a key's slots, and leaves no slot free while a waiter may take it", async () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant("ask" as const),
        key: fc.constantFrom("a", "b", "c"),
        model: fc.constantFrom("m", "n"),
      }),
      fc.record({ kind: fc.constant("release" as const), i: fc.nat() }),
      fc.record({ kind: fc.constant("abort" as const), i: fc.nat() }),
    );
    const limits: Record<string, number | undefined> = { a: 1, b: 2, c: undefined };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.integer({ min: 1, max: 3 }), async (ops, capacity) => {
        const { q } = setup();
        const held: { key: string; model: string; slot: Slot }[] = [];
        const waiting: { key: string; model: string; cancel: TestCancel }[] = [];
        const holds = (f: (h: { key: string; model: string }) => boolean) => held.filter(f).length;
        for (const o of ops) {
          if (o.kind === "ask") {
            const a = { key: o.key, limit: limits[o.key], model: o.model, capacity };
            const s = q.tryAcquire(a);
            if (s) held.push({ key: o.key, model: o.model, slot: s });
            else {
              const w = { key: o.key, model: o.model, cancel: new TestCancel() };
              waiting.push(w);
              void q.wait(a, w.cancel).then((got) => {
                waiting.splice(waiting.indexOf(w), 1);
                if ("slot" in got) held.push({ key: o.key, model: o.model, slot: got.slot });
              });
            }
          } else if (o.kind === "release" && held.length) held.splice(o.i % held.length, 1)[0]!.slot.release();
          else if (o.kind === "abort" && waiting.length) waiting[o.i % waiting.length]!.cancel.abort();
          await settle();
          for (const m of ["m", "n"]) {
            expect(q.active(m)).toBe(holds((h) => h.model === m));
            expect(q.active(m)).toBeLessThanOrEqual(capacity);
            const free = q.active(m) < capacity;
            const mayGo = waiting.some((w) => w.model === m && holds((h) => h.key === w.key) < (limits[w.key] ?? 1e9));
            expect(free && mayGo).toBe(false);
          }
          for (const [k, limit] of Object.entries(limits))
            expect(holds((h) => h.key === k)).toBeLessThanOrEqual(limit ?? 1e9);
          expect(q.waiting()).toBe(waiting.length);
        }
      }),
    );
  });
});
