// nvlinkView(): the pure builder of GET /api/v1/nvlink, on inventories from real captures (copies modified).
import { describe, expect, it } from "vitest";
import { type NvlinkNodeInput, type NvlinkShard, nvlinkView } from "../../api/views/nvlink.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import type { NodeState } from "../../shared/schemas/node.js";
import { GB200_XML, nodeInventory } from "../helpers/inventory.js";
import { DOMAIN } from "../helpers/nvlink-fleet.js";

const OTHER = "00000002-0000-0000-0000-000000000002.2";
/** No domain's IMEX peer list: these tests send no nodes_config.cfg summary. */
const NO_LISTS = new Map();

/** A GB200 tray from the real capture as a view input: tray/slot as given (undefined: not reported), IMEX ready. */
function tray(
  id: string,
  at: { tray?: number; slot?: number } = {},
  change: (inv: Inventory) => void = () => {},
  state: NodeState = "ready",
): NvlinkNodeInput {
  const inv = nodeInventory(id, GB200_XML);
  inv.gpus = inv.gpus.map((g) => ({
    ...g,
    platform: { moduleId: g.platform?.moduleId, trayIndex: at.tray, slotNumber: at.slot },
  }));
  inv.imex = { state: "ready", channels: 2 };
  change(inv);
  return { id, hostname: id, mgmtAddr: `${id}.lab`, state, gpus: inv.gpus, imex: inv.imex };
}

const shard = (shardId: string, node: string, rank: number, fabric = `nvlink:${DOMAIN}`): NvlinkShard => ({
  shardId,
  replicaId: shardId.split("-")[0]!,
  deployment: "d",
  node,
  rank,
  fabric,
  state: "ready",
  transport: null,
});

describe("nvlinkView", () => {
  it("orders trays by tray index, then slot, then node id, unknown last", () => {
    const v = nvlinkView({
      imexLists: NO_LISTS,
      nodes: [
        tray("n-e"),
        tray("n-d", { slot: 3 }),
        tray("n-c", { tray: 2, slot: 9 }),
        tray("n-b", { tray: 2, slot: 1 }),
        tray("n-a", { tray: 7 }),
      ],
      shards: [],
    });
    expect(v.domains[0]!.trays.map((t) => t.node)).toEqual(["n-b", "n-c", "n-a", "n-d", "n-e"]);
  });

  it("draws a node with mixed cluster UUIDs in the domain most of its cards report, and says why it is out", () => {
    const mixed = tray(
      "mixed",
      { tray: 1 },
      (inv) =>
        void (inv.gpus[3]!.fabric = { ...inv.gpus[3]!.fabric!, clusterUuid: "00000002-0000-0000-0000-000000000002" }),
    );
    const v = nvlinkView({ imexLists: NO_LISTS, nodes: [mixed], shards: [] });
    expect(v.domains.map((d) => d.key)).toEqual([DOMAIN]);
    const t = v.domains[0]!.trays[0]!;
    expect(t.reasons).toEqual([`GPUs report different NVLink domains (${DOMAIN}, ${OTHER})`]);
    expect(t.eligible).toBe(false);
    expect(t.gpus.map((g) => g.domain)).toEqual([DOMAIN, DOMAIN, DOMAIN, OTHER]);
    expect(t.gpus.every((g) => g.joined)).toBe(true);
  });

  it("names every card a fabric manager restart took out, and an unhealthy fabric", () => {
    const restarted = tray("r", {}, (inv) => {
      for (const g of inv.gpus) g.fabric = { ...g.fabric!, state: "In Progress", status: "N/A" };
    });
    const sick = tray(
      "s",
      {},
      (inv) => void (inv.gpus[1]!.fabric!.health = { ...inv.gpus[1]!.fabric!.health, summary: "Unhealthy" }),
    );
    const [r, s] = nvlinkView({ imexLists: NO_LISTS, nodes: [restarted, sick], shards: [] }).domains[0]!.trays;
    expect(r!.reasons).toEqual([0, 1, 2, 3].map((i) => `GPU ${i} fabric In Progress`));
    expect(r!.joined).toBe(0);
    expect(s!.reasons).toEqual(["GPU 1 fabric health Unhealthy"]);
    expect(s!.fabricHealth).toBe("Unhealthy");
  });

  it("lists nodes without a cluster UUID apart with why, and nodes with no fabric by id", () => {
    const zero = tray("zero", {}, (inv) => {
      for (const g of inv.gpus) g.fabric = { ...g.fabric!, clusterUuid: "00000000-0000-0000-0000-000000000000" };
    });
    const older = tray("older", {}, (inv) => {
      for (const g of inv.gpus) g.fabric = { state: "Completed", status: "Success" };
    });
    const bare = tray("bare", {}, (inv) => {
      for (const g of inv.gpus) delete g.fabric;
    });
    const v = nvlinkView({
      imexLists: NO_LISTS,
      nodes: [
        zero,
        older,
        bare,
        {
          id: "cpu",
          hostname: "cpu",
          mgmtAddr: "cpu.lab",
          state: "ready",
          gpus: [],
          imex: { state: "absent", channels: 0 },
        },
      ],
      shards: [],
    });
    expect(v.domains).toEqual([]);
    expect(v.standalone.map((s) => [s.node, s.reason])).toEqual([
      [
        "older",
        "no cluster UUID reported (a single machine, or a driver older than 560): not a multi-node NVLink domain",
      ],
      ["zero", "single-machine NVSwitch (cluster UUID is zero): not a multi-node NVLink domain"],
    ]);
    expect(v.standalone[0]!.gpus[0]!.notJoined).toBe(
      "no cluster UUID reported (a single machine, or a driver older than 560)",
    );
    expect(v.noFabric).toEqual(["bare", "cpu"]);
  });

  it("shows the domain's shards (placed there, or on its trays) by replica then rank, and no others", () => {
    const v = nvlinkView({
      imexLists: NO_LISTS,
      nodes: [tray("a", { tray: 1 }), tray("b", { tray: 2 }), { ...tray("hgx"), gpus: [] }],
      shards: [
        shard("r10-s1", "b", 1),
        shard("r10-s0", "a", 0),
        shard("r2-s0", "b", 0, "single"),
        shard("r3-s0", "gone", 0),
        shard("r4-s0", "hgx", 0, "single"),
      ],
    });
    expect(v.domains[0]!.shards.map((s) => s.shardId)).toEqual(["r2-s0", "r3-s0", "r10-s0", "r10-s1"]);
  });

  it("keeps a tray that is not ready out, with its state first among the reasons", () => {
    const t = nvlinkView({
      imexLists: NO_LISTS,
      nodes: [tray("d", {}, (inv) => void (inv.imex = { state: "ready", channels: 0 }), "draining")],
      shards: [],
    }).domains[0]!.trays[0]!;
    expect(t).toMatchObject({ eligible: false, reasons: ["node draining", "IMEX has no channel"] });
  });

  it("takes out only the tray whose IMEX daemon is down when the domain reports DEGRADED; the rest stay, chosen last", () => {
    const degraded = (state: "ready" | "down") => (inv: Inventory) => {
      inv.imex = { state, domainState: "DEGRADED", channels: 2 };
    };
    const v = nvlinkView({
      imexLists: NO_LISTS,
      nodes: [
        tray("a", { tray: 1 }, degraded("ready")),
        tray("b", { tray: 2 }, degraded("down")),
        tray("c", { tray: 3 }, degraded("ready")),
      ],
      shards: [],
    });
    const d = v.domains[0]!;
    expect(d.trays.map((x) => [x.node, x.eligible, x.reasons])).toEqual([
      ["a", true, []],
      ["b", false, ["IMEX down"]],
      ["c", true, []],
    ]);
    expect(d.eligibleTrays).toBe(2);
    expect(d.degraded).toBe(true);
  });

  it("draws a tray again from the same cards (as a scrape's cache hands them) with its state and IMEX of now", () => {
    const first = tray("a");
    const view = (n: NvlinkNodeInput) =>
      nvlinkView({ imexLists: NO_LISTS, nodes: [n], shards: [] }).domains[0]!.trays[0]!;
    expect(view(first)).toMatchObject({ eligible: true, reasons: [] });
    // the same cards list: what depends on the cards alone may be kept, never the node's state or its IMEX
    const lost = { ...first, state: "lost" as const };
    const down = { ...first, imex: { state: "down" as const, channels: 2 } };
    const fresh = (n: NvlinkNodeInput) => view(structuredClone(n));
    expect(view(lost)).toEqual(fresh(lost));
    expect(view(lost)).toMatchObject({ eligible: false, reasons: ["node lost"] });
    expect(view(down)).toEqual(fresh(down));
    expect(view(down)).toMatchObject({ eligible: false, reasons: ["IMEX down"] });
    expect(view(first)).toEqual(fresh(first));
  });
});
