// Work that outlives its request on Node, tracked so that a graceful shutdown can wait for it.

/** A tracker: `run` keeps a promise until it settles; `drain` waits for all that are still running. */
export function createBackground() {
  const running = new Set<Promise<unknown>>();
  return {
    run(work: Promise<unknown>) {
      const p = work.catch(() => undefined).finally(() => running.delete(p));
      running.add(p);
    },
    drain: () => Promise.all([...running]).then(() => undefined),
  };
}
