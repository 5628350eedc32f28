// Device sets on one node: NVLink peers first, then one NUMA node, then lowest ids.
import { describe, expect, it } from "vitest";
import { chooseDevices } from "../../api/placement/devices.js";
import type { PlaceCard } from "../../api/placement/types.js";
import { cards, gpus } from "./builders.js";

/** Cards paired over NVLink (0-1, 2-3, …), NUMA nodes alternating (even cards on 0, odd on 1). */
const pairs = (n: number): PlaceCard[] =>
  Array.from({ length: n }, (_, i) => ({ index: i, numaNode: i % 2, nvlinkPeers: [i ^ 1], nics: [] }));
const ids = (s: ReturnType<typeof chooseDevices>) => s?.devices.map((d) => d.id);

describe("chooseDevices", () => {
  it.each([
    {
      name: "all peers on one NUMA node",
      cs: cards(8, { peers: true, perNuma: 4 }),
      free: [0, 1, 2, 3, 4, 5, 6, 7],
      k: 4,
      want: [0, 1, 2, 3],
      peers: true,
      numa: true,
    },
    {
      name: "the NUMA node that still has room",
      cs: cards(8, { peers: true, perNuma: 4 }),
      free: [0, 2, 3, 4, 5, 6, 7],
      k: 4,
      want: [4, 5, 6, 7],
      peers: true,
      numa: true,
    },
    {
      name: "peers across NUMA nodes before one NUMA node without NVLink",
      cs: pairs(4),
      free: [0, 1, 2, 3],
      k: 2,
      want: [0, 1],
      peers: true,
      numa: false,
    },
    {
      name: "one NUMA node when no peers are left",
      cs: pairs(6),
      free: [0, 3, 4],
      k: 2,
      want: [0, 4],
      peers: false,
      numa: true,
    },
    {
      name: "lowest ids when nothing else holds",
      cs: pairs(4),
      free: [0, 3],
      k: 2,
      want: [0, 3],
      peers: false,
      numa: false,
    },
    {
      name: "unknown NUMA nodes never count as one",
      cs: cards(2, { peers: false, perNuma: 1 }).map((c) => ({ ...c, numaNode: null })),
      free: [0, 1],
      k: 2,
      want: [0, 1],
      peers: false,
      numa: false,
    },
    { name: "one device is always a good set", cs: pairs(2), free: [1], k: 1, want: [1], peers: true, numa: true },
    // every free device asked for (a whole node for a replica): the set is all of them, named as the search names it
    ...[
      {
        name: "a whole node of peers over two NUMA nodes",
        cs: cards(8, { peers: true, perNuma: 4 }),
        peers: true,
        numa: false,
      },
      {
        name: "a whole NUMA node's worth of peers",
        cs: cards(4, { peers: true, perNuma: 4 }),
        peers: true,
        numa: true,
      },
      {
        name: "a whole node without NVLink on one NUMA node",
        cs: cards(4, { peers: false, perNuma: 4 }),
        peers: false,
        numa: true,
      },
      { name: "a whole node of NVLink pairs over two NUMA nodes", cs: pairs(4), peers: false, numa: false },
      {
        name: "a whole node of peers, one card's NUMA node unknown",
        cs: cards(4, { peers: true, perNuma: 4 }).map((c) => (c.index === 2 ? { ...c, numaNode: null } : c)),
        peers: true,
        numa: false,
      },
    ].map((x) => ({ ...x, free: x.cs.map((c) => c.index), k: x.cs.length, want: x.cs.map((c) => c.index) })),
  ])("$name", ({ cs, free, k, want, peers, numa }) => {
    const all = gpus("x", 8);
    const set = chooseDevices(
      cs,
      all.filter((d) => free.includes(d.id)),
      k,
    );
    expect({ ids: ids(set), peers: set?.peers, numa: set?.numa }).toEqual({ ids: want, peers, numa });
  });

  it("names a whole node's set without distinct NICs as the search does, when a replica talks over the network", () => {
    // four peers on one NUMA node, cards 0 and 1 behind the same NIC
    const cs = cards(4, { peers: true, perNuma: 4 }).map((c) => (c.index === 1 ? { ...c, nics: ["mlx5_0"] } : c));
    const set = chooseDevices(cs, gpus("x", 4), 4, { activeNics: new Set(["mlx5_0", "mlx5_2", "mlx5_3"]) });
    expect({ ids: ids(set), peers: set?.peers, numa: set?.numa, nics: set?.nics }).toEqual({
      ids: [0, 1, 2, 3],
      peers: true,
      numa: true,
      nics: false,
    });
  });

  it("returns nothing when too few are free", () => {
    expect(chooseDevices(pairs(4), gpus("x", 2), 3)).toBeUndefined();
  });

  it("stays fast on a large sparse NVLink graph", () => {
    const many = pairs(64);
    const t = performance.now();
    expect(chooseDevices(many, gpus("x", 64), 8)?.devices).toHaveLength(8);
    expect(performance.now() - t).toBeLessThan(500);
  });
});
