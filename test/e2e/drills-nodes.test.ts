// Failure drills (docs/architecture.md, failure behaviour): whole nodes gone — agent and engines — on a simulated
// cluster of three L40S nodes, with
// the control plane's clocks shortened (lost after 10 s of silence, a 4 s repair grace period).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { killAll, until } from "../helpers/process.js";
import { type SimCluster, startSimCluster } from "../helpers/sim.js";

const tmp = tempDir();
let c: SimCluster;

beforeAll(async () => {
  c = await startSimCluster({
    dir: tmp.dir,
    scenario: `nodes:
  - { id: l40s-a, kind: l40s, uuid_prefix: f001 }
  - { id: l40s-b, kind: l40s, uuid_prefix: f002 }
  - { id: l40s-c, kind: l40s, uuid_prefix: f003 }
`,
    serveEnv: {
      LLMGW_NODE_LOST_AFTER_S: "10",
      LLMGW_REPAIR_GRACE_S: "4",
      LLMGW_SWEEP_INTERVAL_S: "1",
      LLMGW_HEARTBEAT_INTERVAL_S: "1",
      LLMGW_REPAIR_MAX_FRACTION: "1",
    },
  });
}, 60_000);
afterAll(async () => {
  await c?.close();
  await killAll();
  tmp.cleanup();
});

type Event = { type: string; message: string };
const events = async (type: string) => (await c.api("GET", `/api/v1/events?type=${type}`)).body.items as Event[];

describe("drills: nodes lost", () => {
  it("a node whose agent and engines are gone goes lost; its replica is re-placed only after the grace period", async () => {
    await c.deploy({ name: "m", replicas: 2, gpu_class: "l40s-45g", about: "" });
    const before = await c.ready("m", 2);
    const victim = before[0]!.shards[0]!.nodeId;
    const used = new Set(before.map((r) => r.shards[0]!.nodeId));
    const spare = ["l40s-a", "l40s-b", "l40s-c"].find((n) => !used.has(n))!;

    await c.killNode(victim);
    await until(async () => (await c.nodeState(victim)) === "lost", 20_000, `${victim} lost`);
    // lost, but within the grace period: the replica is still there (a network blip must not move it)
    expect((await c.replicas("m")).map((r) => r.id)).toContain(before[0]!.id);

    let after: Awaited<ReturnType<SimCluster["ready"]>> = [];
    await until(
      async () => (after = await c.ready("m", 2)).every((r) => r.id !== before[0]!.id),
      30_000,
      "the lost node's replica re-placed",
    );
    expect(after.map((r) => r.shards[0]!.nodeId).sort()).toEqual(
      [...used]
        .filter((n) => n !== victim)
        .concat(spare)
        .sort(),
    );
    expect((await events("replica_repaired")).map((e) => e.message)).toContain(
      `replica ${before[0]!.id} freed for re-placement: node ${victim} lost for more than 4 s past 10 s of silence`,
    );
  }, 90_000);

  it("more than half of the fleet lost at once: nothing is evicted, and an event says why", async () => {
    const before = await c.ready("m", 2);
    const hosts = before.map((r) => r.shards[0]!.nodeId);
    for (const n of hosts) await c.killNode(n);
    // three of three nodes are now lost (one from the drill above): past lost + grace, with room to spare
    await until(async () => (await events("repair_held")).length > 0, 40_000, "the repair_held event");
    const held = (await events("repair_held"))[0]!.message;
    expect(held).toMatch(
      /^[23] of 3 nodes are lost at once: not re-placing their [12] replica\(s\) \(a control-plane or network outage must not evict the fleet\)/,
    );
    expect((await c.replicas("m")).map((r) => r.id).sort()).toEqual(before.map((r) => r.id).sort());
    for (const n of hosts) expect(await c.nodeState(n)).toBe("lost");
  }, 90_000);
});
