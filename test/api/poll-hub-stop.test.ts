// The Node poll hub when its instance stops: every parked wait answers at once, and a wait that starts after the stop
// does not park at all.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shards } from "../../api/db/schema.js";
import { nodeAssignments } from "../../api/db/shards.js";
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

  it("answers every parked wait with its node's index and shards, read together in parts of nodes", async () => {
    // more nodes than one part of the read
    const ids = Array.from({ length: 1100 }, (_, i) => `s${i}`);
    await db.client.batch(
      ids.flatMap((id, i) => [
        {
          sql: `insert into nodes (id, hostname, mgmt_addr, pool, labels, agent_version, token_hash, inventory, registered_at, last_seen_at)
              values (?, ?, '10.0.0.1', 'p', '{}', '0.1.0', ?, '{}', 0, 0)`,
          args: [id, id, `hash-${id}`],
        },
        { sql: "insert into node_assign_index values (?, ?)", args: [id, i + 1] },
      ]),
      "write",
    );
    await db.db.insert(shards).values(
      ["s0", "s777", "s1099"].map((nodeId) => ({
        id: `${nodeId}-a`,
        replicaId: `r-${nodeId}`,
        nodeId,
        rank: 0,
        spec: JSON.stringify({ shardId: `${nodeId}-a` }),
      })),
    );
    const stop = new AbortController();
    const hub = createPollHub(db.store, 3_600_000, () => {}, stop.signal);
    const parked = ids.map((id, i) => hub.wait(id, i + 1, 3_600_000));
    stop.abort();
    const got = await Promise.all(parked);
    // what each poll would have read for itself, handed to it
    expect(got).toEqual(await Promise.all(ids.map((id) => nodeAssignments(db.store, id))));
    expect(got[777]).toEqual({ index: 778, shards: [{ shardId: "s777-a" }] });
  });
});
