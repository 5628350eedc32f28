// The agents' frequent writes go as a batch of statements whose checks sit in their WHERE, with nothing read first (on
// a libSQL server: one round trip for many agents); a node back from silence is noted in the same batch, once. Where
// a check fails — the heartbeat's facts new, the node lost since its token was checked, the node unknown — the write
// takes its full path (a poll: a second batch): nothing is lost, and a node back from silence is still noted.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store, WrittenEvent } from "../../api/db/client.js";
import { readGeneration } from "../../api/db/cluster.js";
import { listEvents } from "../../api/db/events.js";
import { nodes, shardStatus } from "../../api/db/schema.js";
import { type BeatHints, newBeatHints } from "../../api/nodes/beat-hints.js";
import { heartbeatOf } from "../../shared/heartbeat-of.js";
import type { Heartbeat } from "../../shared/schemas/agent.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { createTestApp, defaultSettings, type TestApp } from "../helpers/app.js";
import { H100_XML, inventoryFromCapture, registerBody } from "../helpers/inventory.js";

/**
 * What the app asked its store: write transactions and statement batches; `before` runs ahead of the next batch, on
 * the store itself (`inner`: its writes are not counted).
 */
const seen = { writes: 0, batches: 0, before: undefined as undefined | ((inner: Store) => Promise<void>) };
const watching = (store: Store): Store => ({
  ...store,
  write: (fn) => {
    seen.writes++;
    return store.write(fn);
  },
  writeStatements: async (stmts, stored) => {
    seen.batches++;
    const before = seen.before;
    seen.before = undefined;
    await before?.(store);
    return store.writeStatements(stmts, stored);
  },
});

/** The instance's hints, which can be made to know nothing (as another instance, or this one after a restart). */
const real = newBeatHints();
let amnesia = false;
const hints: BeatHints = {
  applied: (node) => (amnesia ? undefined : real.applied(node)),
  saw: (node, digest) => real.saw(node, digest),
  registered: (node, digest) => real.registered(node, digest),
};

let t: TestApp;
const inv = inventoryFromCapture(H100_XML);
/** The events the store told its listener of (what `llmgw serve` logs). */
const logged: WrittenEvent[] = [];
beforeAll(async () => {
  t = await createTestApp({ wrapStore: watching, beatHints: hints });
  t.store.onEvents?.((e) => logged.push(...e));
});
afterAll(() => t.close());

async function register(id: string) {
  const r = await t.call("POST", "/api/v1/agents/register", { token: t.adminToken, body: registerBody(id, inv) });
  expect(r.status, r.text).toBeLessThan(300);
  return r.json.nodeToken as string;
}
/** A heartbeat with readings that differ by `k`, and the node's one shard in `state`. */
const heartbeat = (k: number, state = "ready"): Heartbeat => ({
  gpus: inv.gpus.map((g) => ({ uuid: g.uuid, memoryUsedMiB: 1000 * k + g.index, utilizationPercent: k })),
  shards: [{ shardId: "s1", replicaId: "r1", state }],
});
const row = async (id: string) => (await t.db.select().from(nodes).where(eq(nodes.id, id)))[0]!;
const shardState = async (id: string) =>
  (await t.db.select().from(shardStatus).where(eq(shardStatus.nodeId, id))).map((s) => s.state);
const shownMemory = async (id: string) =>
  ((await t.admin("GET", `/api/v1/nodes/${id}`)).json.inventory as Inventory).gpus.map((g) => g.memoryUsedMiB);
const counts = () => ({ writes: seen.writes, batches: seen.batches });

describe("a heartbeat with nothing new but its readings", () => {
  it("is written as one batch of statements, with no write transaction", async () => {
    const token = await register("q-1");
    const beat = (body: Heartbeat) => t.call("POST", "/api/v1/agents/q-1/heartbeat", { token, body });
    expect((await beat(heartbeat(1, "loading"))).status).toBe(200); // the first one is applied to the inventory
    const before = counts();
    const gen = await readGeneration(t.db);
    t.clock.advance(1000);

    const r = await beat(heartbeat(2));
    expect(r.status, r.text).toBe(200);
    expect(counts()).toEqual({ writes: before.writes, batches: before.batches + 1 });
    expect(await shownMemory("q-1")).toEqual(inv.gpus.map((g) => 2000 + g.index));
    expect(await shardState("q-1")).toEqual(["ready"]);
    expect((await row("q-1")).lastHeartbeatAt).toBe(t.clock.now());
    // readings and a shard's state in a heartbeat do not move placement: the full path would not bump either
    expect(await readGeneration(t.db)).toBe(gen);
  });

  it("the first after a registration, saying what the registration said (as its agent sends it), is one batch", async () => {
    const token = await register("q-8");
    const before = counts();
    const readings = { ...inv, gpus: inv.gpus.map((g) => ({ ...g, memoryUsedMiB: 500 + g.index })) };
    const r = await t.call("POST", "/api/v1/agents/q-8/heartbeat", { token, body: heartbeatOf(readings) });
    expect(r.status, r.text).toBe(200);
    // no transaction per node for a fleet's first minute of heartbeats after it registered
    expect(counts()).toEqual({ writes: before.writes, batches: before.batches + 1 });
    expect(await shownMemory("q-8")).toEqual(inv.gpus.map((g) => 500 + g.index));
  });

  it("the first after a registration, with a fact the registration did not say, takes the full path and applies it", async () => {
    const token = await register("q-9");
    const sick = heartbeatOf({
      ...inv,
      gpus: inv.gpus.map((g, i) => (i ? g : { ...g, health: { ...g.health, problems: ["uncorrectable ECC errors"] } })),
    });
    const before = counts();
    expect((await t.call("POST", "/api/v1/agents/q-9/heartbeat", { token, body: sick })).status).toBe(200);
    expect(counts()).toEqual({ writes: before.writes + 1, batches: before.batches });
    const node = (await t.admin("GET", "/api/v1/nodes/q-9")).json.inventory as Inventory;
    expect(node.gpus[0]!.health.problems).toEqual(["uncorrectable ECC errors"]);
  });

  it("whose facts are new (a card's problems) takes the full path at once, which applies them to the inventory", async () => {
    const token = await register("q-2");
    const beat = (body: Heartbeat) => t.call("POST", "/api/v1/agents/q-2/heartbeat", { token, body });
    expect((await beat(heartbeat(1))).status).toBe(200);
    const before = counts();
    const sick = heartbeat(2);
    sick.gpus![0]!.health = { ...inv.gpus[0]!.health, problems: ["uncorrectable ECC errors"] };
    expect((await beat(sick)).status).toBe(200);
    // the instance last saw other facts applied to this node: no batch that would change nothing
    expect(counts()).toEqual({ writes: before.writes + 1, batches: before.batches });
    const node = (await t.admin("GET", "/api/v1/nodes/q-2")).json.inventory as Inventory;
    expect(node.gpus[0]!.health.problems).toEqual(["uncorrectable ECC errors"]);
    expect(node.gpus.map((g) => g.memoryUsedMiB)).toEqual(inv.gpus.map((g) => 2000 + g.index));
  });

  it("after its node registered again takes the full path at once, and the next one is quick", async () => {
    let token = await register("q-6");
    const beat = (body: Heartbeat) => t.call("POST", "/api/v1/agents/q-6/heartbeat", { token, body });
    expect((await beat(heartbeat(1))).status).toBe(200);
    token = await register("q-6"); // an admin's reset: a new token, and the digest the instance saw applied cleared
    let before = counts();
    expect((await beat(heartbeat(2))).status).toBe(200);
    // the instance wrote the registration: no batch that would change nothing
    expect(counts()).toEqual({ writes: before.writes + 1, batches: before.batches });
    before = counts();
    expect((await beat(heartbeat(3))).status).toBe(200);
    expect(counts()).toEqual({ writes: before.writes, batches: before.batches + 1 });
    expect(await shownMemory("q-6")).toEqual(inv.gpus.map((g) => 3000 + g.index));
  });

  it("reaching an instance that knows nothing of the node (another had its last heartbeat) is quick all the same", async () => {
    const token = await register("q-7");
    const beat = (body: Heartbeat) => t.call("POST", "/api/v1/agents/q-7/heartbeat", { token, body });
    expect((await beat(heartbeat(1))).status).toBe(200);
    amnesia = true;
    try {
      const before = counts();
      expect((await beat(heartbeat(2))).status).toBe(200);
      expect(counts()).toEqual({ writes: before.writes, batches: before.batches + 1 });
      expect(await shownMemory("q-7")).toEqual(inv.gpus.map((g) => 2000 + g.index));
      // and one whose facts are new there tries the batch, which changes nothing, then its transaction applies them
      const sick = heartbeat(3);
      sick.gpus![0]!.health = { ...inv.gpus[0]!.health, problems: ["uncorrectable ECC errors"] };
      const again = counts();
      expect((await beat(sick)).status).toBe(200);
      expect(counts()).toEqual({ writes: again.writes + 1, batches: again.batches + 1 });
      const node = (await t.admin("GET", "/api/v1/nodes/q-7")).json.inventory as Inventory;
      expect(node.gpus[0]!.health.problems).toEqual(["uncorrectable ECC errors"]);
    } finally {
      amnesia = false;
    }
  });

  it("from a node silent past the limit is one batch as well, which notes its return and merges its readings", async () => {
    const token = await register("q-3");
    const beat = (body: Heartbeat) => t.call("POST", "/api/v1/agents/q-3/heartbeat", { token, body });
    expect((await beat(heartbeat(1))).status).toBe(200);
    expect((await beat({ ...heartbeat(1), memoryAvailableMiB: 500 })).status).toBe(200);
    t.clock.advance((defaultSettings().nodeLostAfterS + 1) * 1000);
    const gen = await readGeneration(t.db);
    const before = counts();
    logged.length = 0;
    expect((await beat(heartbeat(2))).status).toBe(200);
    expect(counts()).toEqual({ writes: before.writes, batches: before.batches + 1 });
    expect(await row("q-3")).toMatchObject({ lostAt: null, lastSeenAt: t.clock.now() });
    const back = { type: "node_recovered", nodeId: "q-3", message: "q-3 is back after 181 s of silence" };
    expect(logged).toEqual([back]);
    expect((await listEvents(t.db, { nodeId: "q-3", limit: 50 })).filter((e) => e.type === back.type)).toHaveLength(1);
    expect(await readGeneration(t.db)).toBe(gen + 1);
    expect(await shownMemory("q-3")).toEqual(inv.gpus.map((g) => 2000 + g.index));
    // a reading the heartbeat left out keeps its last value
    expect(((await t.admin("GET", "/api/v1/nodes/q-3")).json.inventory as Inventory).memory.availableMiB).toBe(500);
  });

  it("from a node lost, with facts new to an instance that knew nothing of them, notes its return once", async () => {
    const token = await register("q-14");
    const beat = (body: Heartbeat) => t.call("POST", "/api/v1/agents/q-14/heartbeat", { token, body });
    expect((await beat(heartbeat(1))).status).toBe(200);
    await t.db.update(nodes).set({ lostAt: t.clock.now() }).where(eq(nodes.id, "q-14"));
    t.clock.advance(1000);
    const sick = heartbeat(2);
    sick.gpus![0]!.health = { ...inv.gpus[0]!.health, problems: ["uncorrectable ECC errors"] };
    amnesia = true;
    try {
      const before = counts();
      expect((await beat(sick)).status).toBe(200);
      // the batch found other facts applied and changed nothing; the full path applied these and noted the return
      expect(counts()).toEqual({ writes: before.writes + 1, batches: before.batches + 1 });
    } finally {
      amnesia = false;
    }
    expect(await row("q-14")).toMatchObject({ lostAt: null, lastSeenAt: t.clock.now() });
    const events = await listEvents(t.db, { nodeId: "q-14", limit: 50 });
    expect(events.filter((e) => e.type === "node_recovered")).toHaveLength(1);
  });
});

describe("a status report", () => {
  it("is one batch; a ready shard moves the generation, a loading one does not", async () => {
    const token = await register("q-4");
    const report = (state: string) =>
      t.call("POST", "/api/v1/agents/q-4/status", {
        token,
        body: { shards: [{ shardId: "s1", replicaId: "r1", state }] },
      });
    const before = counts();
    const gen = await readGeneration(t.db);
    expect((await report("loading")).status).toBe(200);
    expect(await readGeneration(t.db)).toBe(gen);
    expect((await report("ready")).status).toBe(200);
    expect(await readGeneration(t.db)).toBe(gen + 1);
    expect(counts()).toEqual({ writes: before.writes, batches: before.batches + 2 });
    expect(await shardState("q-4")).toEqual(["ready"]);
  });

  it("from a node lost is one batch as well, which notes its return", async () => {
    const token = await register("q-15");
    await t.db.update(nodes).set({ lostAt: t.clock.now() }).where(eq(nodes.id, "q-15"));
    t.clock.advance(2000);
    const before = counts();
    logged.length = 0;
    const r = await t.call("POST", "/api/v1/agents/q-15/status", {
      token,
      body: { shards: [{ shardId: "s1", replicaId: "r1", state: "loading" }] },
    });
    expect(r.status, r.text).toBe(200);
    expect(counts()).toEqual({ writes: before.writes, batches: before.batches + 1 });
    expect(await row("q-15")).toMatchObject({ lostAt: null, lastSeenAt: t.clock.now() });
    expect(logged.map((e) => e.type)).toEqual(["node_recovered"]);
    expect(await shardState("q-15")).toEqual(["loading"]);
  });

  it("for a node deleted since its token was checked is refused as an unknown node, with nothing written", async () => {
    const token = await register("q-5");
    seen.before = async (inner) => {
      await inner.write((tx) => tx.delete(nodes).where(eq(nodes.id, "q-5")));
    };
    const r = await t.call("POST", "/api/v1/agents/q-5/status", {
      token,
      body: { shards: [{ shardId: "s1", state: "ready" }] },
    });
    expect(r.status, r.text).toBe(401);
    expect(await shardState("q-5")).toEqual([]);
  });
});

describe("a poll that refreshes its node's last-seen time", () => {
  const poll = (id: string, token: string) => t.call("GET", `/api/v1/agents/${id}/assignments`, { token });
  const seenAt = async (id: string) => (await row(id)).lastSeenAt;

  it("is one batch for a node heard from: a fleet's polls coming back at once write no transaction each", async () => {
    const token = await register("q-10");
    expect((await poll("q-10", token)).status).toBe(200); // places what the registration changed
    t.clock.advance(61_000); // past a third of the lost-after time
    const before = counts();
    const r = await poll("q-10", token);
    expect(r.status, r.text).toBe(200);
    expect(counts()).toEqual({ writes: before.writes, batches: before.batches + 1 });
    expect(await seenAt("q-10")).toBe(t.clock.now());
  });

  it("is one batch for a node silent past the limit as well, which notes its return", async () => {
    const token = await register("q-11");
    expect((await poll("q-11", token)).status).toBe(200);
    t.clock.advance((defaultSettings().nodeLostAfterS + 1) * 1000);
    const gen = await readGeneration(t.db);
    const before = counts();
    logged.length = 0;
    expect((await poll("q-11", token)).status).toBe(200);
    // a fleet back after an outage past the lost-after time writes no transaction per node: the one write is the
    // placement run that the new generation starts
    expect(counts()).toEqual({ writes: before.writes + 1, batches: before.batches + 1 });
    expect(await row("q-11")).toMatchObject({ lostAt: null, lastSeenAt: t.clock.now() });
    const events = await listEvents(t.db, { nodeId: "q-11", limit: 50 });
    expect(events.filter((e) => e.type === "node_recovered").map((e) => [e.at, e.message])).toEqual([
      [t.clock.now(), "q-11 is back after 181 s of silence"],
    ]);
    // the process log says so, as it does for a transaction's events
    expect(logged).toEqual([
      { type: "node_recovered", nodeId: "q-11", message: "q-11 is back after 181 s of silence" },
    ]);
    // a node back changes what placement may use
    expect(await readGeneration(t.db)).toBe(gen + 1);
    // the next poll writes nothing more
    logged.length = 0;
    t.clock.advance(1000);
    expect((await poll("q-11", token)).status).toBe(200);
    expect(await readGeneration(t.db)).toBe(gen + 1);
    expect(logged).toEqual([]);
  });

  it("a node lost after its token was checked is noted back all the same", async () => {
    const token = await register("q-12");
    expect((await poll("q-12", token)).status).toBe(200);
    t.clock.advance(61_000);
    // between the token's check and the batch, the row shows the node lost (the liveness sweep of another instance)
    seen.before = async (inner) => {
      await inner.write((tx) => tx.update(nodes).set({ lostAt: 1 }).where(eq(nodes.id, "q-12")));
    };
    const gen = await readGeneration(t.db);
    const before = counts();
    expect((await poll("q-12", token)).status).toBe(200);
    // the first batch found it lost and changed nothing, a second noted it back (the one write: placement's run)
    expect(counts()).toEqual({ writes: before.writes + 1, batches: before.batches + 2 });
    expect(await row("q-12")).toMatchObject({ lostAt: null, lastSeenAt: t.clock.now() });
    const events = await listEvents(t.db, { nodeId: "q-12", limit: 50 });
    expect(events.map((e) => e.type)).toContain("node_recovered");
    expect(await readGeneration(t.db)).toBe(gen + 1);
  });

  it("of a node deleted since its token was checked writes nothing", async () => {
    const token = await register("q-13");
    expect((await poll("q-13", token)).status).toBe(200);
    t.clock.advance((defaultSettings().nodeLostAfterS + 1) * 1000);
    seen.before = async (inner) => {
      await inner.write((tx) => tx.delete(nodes).where(eq(nodes.id, "q-13")));
    };
    const gen = await readGeneration(t.db);
    await poll("q-13", token);
    expect(await listEvents(t.db, { nodeId: "q-13", type: "node_recovered", limit: 50 })).toEqual([]);
    expect(await readGeneration(t.db)).toBe(gen);
  });
});
