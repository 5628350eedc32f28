// A manual clock and timer for the fair queue's tests: time moves only when the test says; the timers due fire then.
import { EventEmitter } from "node:events";
import type { Cancel } from "../../api/router/failures.js";

/** A clock at 0 with `setTimer` for createFairQueue; `advance` moves it and fires the timers come due, in order. */
export function manualTimers() {
  let t = 0;
  const timers: { at: number; fn: () => void; on: boolean }[] = [];
  return {
    now: () => t,
    setTimer(fn: () => void, ms: number) {
      const timer = { at: t + ms, fn, on: true };
      timers.push(timer);
      return () => void (timer.on = false);
    },
    advance(ms: number) {
      t += ms;
      for (const timer of timers.filter((x) => x.on && x.at <= t).sort((a, b) => a.at - b.at)) {
        timer.on = false;
        timer.fn();
      }
    },
    /** Timers set and neither fired nor stopped. */
    pending: () => timers.filter((x) => x.on).length,
  };
}

/** A Cancel the test aborts, as the handlers' own. */
export class TestCancel extends EventEmitter implements Cancel {
  aborted = false;
  abort() {
    if (this.aborted) return;
    this.aborted = true;
    this.emit("abort");
  }
}
