// What the NVLink view says of a tray besides eligibility: its IMEX peer list against the domain's nodes, and the
// shards on it whose transport is degraded. Pure code, on trays from the real GB200 capture (copies modified).
import { describe, expect, it } from "vitest";
import { imexListsOf, type NvlinkNodeInput, type NvlinkShard, nvlinkView } from "../../api/views/nvlink.js";
import { degradedShardsOn, imexConfigOf } from "../../api/views/nvlink-notes.js";
import { domainAddresses, nvlinkPeers } from "../../api/views/nvlink-peers.js";
import { imexConfigDigest } from "../../shared/imex-config.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";
import { GB200_XML, nodeInventory } from "../helpers/inventory.js";
import { DOMAIN } from "../helpers/nvlink-fleet.js";

/** A peer list's summary: what a heartbeat sends, and what a domain's nodes make. */
const summary = async (addresses: string[]) => ({
  digest: await imexConfigDigest(addresses),
  addresses: addresses.length,
});

describe("imexConfigOf", () => {
  it("matches, or says in words how the list differs from the domain's nodes", async () => {
    const domain = await summary(["10.0.0.11", "10.0.0.12", "10.0.0.13"]);
    const cases: [string[], boolean, string | null][] = [
      [["10.0.0.13", "10.0.0.11", "10.0.0.12"], true, null],
      [["10.0.0.11", "10.0.0.12"], false, "IMEX nodes_config.cfg lists 2 addresses, not the 3 nodes of this domain"],
      [["10.0.0.11"], false, "IMEX nodes_config.cfg lists 1 address, not the 3 nodes of this domain"],
      [
        ["10.0.0.11", "10.0.0.12", "10.0.0.14"],
        false,
        "IMEX nodes_config.cfg lists 3 addresses, not those of the 3 nodes of this domain",
      ],
    ];
    for (const [addresses, matches, warning] of cases)
      expect(imexConfigOf(await summary(addresses), domain), addresses.join(",")).toEqual({
        addresses: addresses.length,
        matches,
        warning,
      });
  });

  it("is null when the node sent none", async () => {
    expect(imexConfigOf(null, await summary(["10.0.0.11"]))).toBeNull();
    expect(imexConfigOf(undefined, await summary(["10.0.0.11"]))).toBeNull();
  });
});

const degraded: ShardTransport = {
  verdict: "degraded",
  expected: `nvlink:${DOMAIN}`,
  via: "NET/Socket",
  observed: "NET/Socket on eth0 (NCCL 2.21.5)",
  reason: `placed on nvlink:${DOMAIN}; NCCL uses NET/Socket on eth0`,
};
const shard = (shardId: string, node: string, rank: number, transport: ShardTransport | null = null): NvlinkShard => ({
  shardId,
  replicaId: shardId.split("-")[0]!,
  deployment: "big",
  node,
  rank,
  fabric: `nvlink:${DOMAIN}`,
  state: "ready",
  transport,
});

describe("degradedShardsOn", () => {
  it("lists the node's shards whose transport is degraded, with the agent's reason, and no others", () => {
    const ok: ShardTransport = { verdict: "ok", expected: `nvlink:${DOMAIN}`, via: "MNNVL", observed: "MNNVL" };
    const shards = [
      shard("r1-s0", "a", 0, ok),
      shard("r1-s1", "b", 1, degraded),
      shard("r2-s0", "a", 0, degraded),
      shard("r3-s0", "a", 0),
    ];
    expect(degradedShardsOn("a", shards)).toEqual([{ shardId: "r2-s0", replicaId: "r2", reason: degraded.reason }]);
  });

  it("says what was placed and what NCCL used when the agent gave no reason", () => {
    const { reason: _, ...bare } = degraded;
    expect(degradedShardsOn("a", [shard("r4-s0", "a", 0, bare)])[0]!.reason).toBe(
      `placed on nvlink:${DOMAIN}; NCCL uses NET/Socket on eth0 (NCCL 2.21.5)`,
    );
  });
});

/** Tray `id` of the GB200 capture at `mgmtAddr`; `blank`: its cards name no domain now (a fabric manager restart). */
function tray(id: string, mgmtAddr: string, o: { blank?: boolean; sent?: { digest: string; addresses: number } } = {}) {
  const inv = nodeInventory(id, GB200_XML);
  if (o.blank) for (const g of inv.gpus) g.fabric = { state: "In Progress", status: "N/A" };
  return {
    id,
    hostname: id,
    mgmtAddr,
    state: "ready",
    gpus: inv.gpus,
    imex: { state: "ready", channels: 1 },
    lastDomain: DOMAIN,
    imexConfig: o.sent ?? null,
  } satisfies NvlinkNodeInput;
}

describe("nvlinkView: the trays' notes", () => {
  it("compares each tray's list with every node drawn in the domain (a tray out now included), once per domain", async () => {
    const all = ["10.0.0.11", "10.0.0.12", "10.0.0.13"];
    const nodes = [
      tray("a", "10.0.0.11", { sent: await summary(all) }),
      tray("b", "10.0.0.12", { sent: await summary(all.slice(0, 2)) }),
      tray("c", "10.0.0.13", { blank: true }),
    ];
    const lists = await imexListsOf(nodes);
    expect([...lists]).toEqual([[DOMAIN, await summary(all)]]);
    // the same set the peers endpoint answers a node of the domain
    const peers = nodes.map((n) => ({ id: n.id, mgmtAddr: n.mgmtAddr, domain: DOMAIN }));
    expect(nvlinkPeers(peers, "c").addresses).toEqual(domainAddresses(peers).get(DOMAIN));
    const trays = nvlinkView({ nodes, shards: [], imexLists: lists }).domains[0]!.trays;
    expect(trays.map((t) => [t.node, t.imexConfig, t.eligible])).toEqual([
      ["a", { addresses: 3, matches: true, warning: null }, true],
      [
        "b",
        {
          addresses: 2,
          matches: false,
          warning: "IMEX nodes_config.cfg lists 2 addresses, not the 3 nodes of this domain",
        },
        true,
      ],
      ["c", null, false],
    ]);
  });

  it("notes on each tray the shards placed on it whose transport is degraded, and keeps the domain's shards' transport", async () => {
    const nodes = [tray("a", "10.0.0.11"), tray("b", "10.0.0.12")];
    const v = nvlinkView({
      nodes,
      shards: [shard("r1-s1", "b", 1, degraded), shard("r1-s0", "a", 0)],
      imexLists: await imexListsOf(nodes),
    });
    const [a, b] = v.domains[0]!.trays;
    expect(a!.degradedShards).toEqual([]);
    expect(b!.degradedShards).toEqual([{ shardId: "r1-s1", replicaId: "r1", reason: degraded.reason }]);
    expect(b!.eligible).toBe(true);
    expect(v.domains[0]!.shards.map((s) => [s.shardId, s.transport?.verdict ?? null])).toEqual([
      ["r1-s0", null],
      ["r1-s1", "degraded"],
    ]);
  });
});
