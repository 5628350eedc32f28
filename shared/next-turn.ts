// A turn of the event loop, for long synchronous work done in parts: the embedded database's driver is synchronous,
// so a read or a computation over a whole fleet would otherwise hold up every other request for all of it.

/** Resolves after a turn of the event loop (a timer: pending I/O callbacks run first). */
export const nextTurn = (): Promise<void> => new Promise((ok) => setTimeout(ok, 0));
