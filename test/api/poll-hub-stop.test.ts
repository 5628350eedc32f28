// The Node poll hub when its instance stops: every parked wait answers at once, and a wait that starts after the stop
// does not park at all.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPollHub } from "../../api/poll-hub.js";
import { migratedDb } from "../helpers/app.js";

let db: Awaited<ReturnType<typeof migratedDb>>;
beforeAll(async () => {
  db = await migratedDb();
});
afterAll(() => db.close());

describe("createPollHub's stop signal", () => {
  it("answers parked waits when it aborts, and later waits at once", async () => {
    const stop = new AbortController();
    const hub = createPollHub(db.store, 50, () => {}, stop.signal);
    const order: string[] = [];
    const parked = [hub.wait("a", 0, 3_600_000), hub.wait("b", 4, 3_600_000)].map((w, i) =>
      w.then(() => void order.push(`wait ${i}`)),
    );
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    order.push("stop");
    stop.abort();
    await Promise.all(parked);
    expect(order).toEqual(["stop", "wait 0", "wait 1"]);
    await hub.wait("a", 0, 3_600_000);
  });
});
