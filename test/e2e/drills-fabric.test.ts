// Failure drills (docs/architecture.md, failure behaviour) on the NVLink fabric: three simulated GB200 trays of one
// domain, also on an InfiniBand
// fabric. A fabric manager restart drops every card of a tray at once; an IMEX daemon goes down. What the user checks:
// /api/v1/nvlink, /metrics, where new multi-node replicas go, and that running ones survive a short blip.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { killAll, until } from "../helpers/process.js";
import { type Replica, type SimCluster, startSimCluster } from "../helpers/sim.js";

const tmp = tempDir();
let c: SimCluster;
const TRAYS = ["gb-1", "gb-2", "gb-3"];

beforeAll(async () => {
  c = await startSimCluster({
    dir: tmp.dir,
    scenario: `nodes:
${TRAYS.map((id, i) => `  - { id: ${id}, kind: gb200, tray: ${i + 1}, uuid_prefix: "9${i}00", ib_fabric: ib-gb }`).join("\n")}
`,
    serveEnv: { LLMGW_HEARTBEAT_INTERVAL_S: "1" },
  });
}, 60_000);
afterAll(async () => {
  await c?.close();
  await killAll();
  tmp.cleanup();
});

type Tray = { node: string; eligible: boolean; reasons: string[] };
const trays = async () =>
  ((await c.api("GET", "/api/v1/nvlink")).body.domains[0].trays as Tray[]).map((t) => ({
    node: t.node,
    eligible: t.eligible,
    reasons: t.reasons,
  }));
const eligibleGauge = async () => {
  const text = await (await fetch(`${c.url}/metrics`)).text();
  return (
    TRAYS.map((t) => text.match(new RegExp(`^llmgw_imex_up\\{node="${t}"\\} (\\d)$`, "m"))?.[1]).join("") +
    "/" +
    text.split("\n").filter((l) => l.startsWith("llmgw_gpu_nvlink_joined{") && l.endsWith(" 1")).length
  );
};
/** A 2-node replica, one GB200 per tray. */
const deployPair = (name: string) =>
  c.deploy({ name, replicas: 1, gpu_class: "gb200-185g", tp: 2, gpus_per_node: 1, nodes: 2, about: "" });
const placed = async (name: string) => {
  const [r] = await c.ready(name);
  return { id: r!.id, nodes: r!.shards.map((s) => s.nodeId).sort(), fabric: r!.shards[0]!.fabric };
};
const pids = (rs: Replica[]) => rs.flatMap((r) => r.shards.map((s) => c.enginePid(s.nodeId, s.shardId)));

describe("drills: the NVLink fabric", () => {
  it("a fabric manager restart on a tray takes it out of the domain within a heartbeat; new replicas go to the other trays, or to InfiniBand when too few are left; running ones survive the blip", async () => {
    await deployPair("first");
    const first = await placed("first");
    expect(first.fabric).toMatch(/^nvlink:/);
    const running = await c.ready("first");
    const firstPids = pids(running);
    expect(await eligibleGauge()).toBe("111/12");

    const [out, ...rest] = [TRAYS.find((t) => !first.nodes.includes(t))!, ...first.nodes];
    c.setState(out, { fabric_restart: true });
    await until(async () => !(await trays()).find((t) => t.node === out)!.eligible, 10_000, `${out} out of the domain`);
    expect((await trays()).find((t) => t.node === out)!.reasons).toEqual([
      "GPU 0 fabric In Progress",
      "GPU 1 fabric In Progress",
      "GPU 2 fabric In Progress",
      "GPU 3 fabric In Progress",
    ]);
    await until(async () => (await eligibleGauge()) === "111/8", 10_000, "the metrics to show four cards out");

    await deployPair("second");
    const second = await placed("second");
    expect([second.fabric.startsWith("nvlink:"), second.nodes]).toEqual([true, [...rest].sort()]);

    // a second tray drops too: one tray left in the domain, so the next pair goes over InfiniBand
    c.setState(rest[0]!, { fabric_restart: true });
    await until(async () => (await trays()).filter((t) => t.eligible).length === 1, 10_000, "one eligible tray left");
    await deployPair("third");
    expect((await placed("third")).fabric).toBe("ib:ib-gb");

    // the blip ends: both trays rejoin; the replicas that were running never moved or restarted
    c.setState(out, {});
    c.setState(rest[0]!, {});
    await until(async () => (await trays()).every((t) => t.eligible), 10_000, "every tray eligible again");
    const after = await c.ready("first");
    expect(after.map((r) => r.id)).toEqual([first.id]);
    expect(pids(after)).toEqual(firstPids);
    expect((await placed("second")).id).toBe(second.id);
  }, 120_000);

  it("IMEX down on a tray: out of the domain with the reason, and new replicas avoid it", async () => {
    c.setState("gb-1", { imex_down: true });
    await until(
      async () => (await trays()).find((t) => t.node === "gb-1")!.reasons.includes("IMEX down"),
      10_000,
      "gb-1 out with IMEX down",
    );
    expect((await trays()).map((t) => [t.node, t.eligible])).toEqual([
      ["gb-1", false],
      ["gb-2", true],
      ["gb-3", true],
    ]);
    await until(async () => (await eligibleGauge()).startsWith("011"), 10_000, "llmgw_imex_up 0 for gb-1");
    await deployPair("fourth");
    const fourth = await placed("fourth");
    expect([fourth.fabric.startsWith("nvlink:"), fourth.nodes]).toEqual([true, ["gb-2", "gb-3"]]);
  }, 60_000);
});
