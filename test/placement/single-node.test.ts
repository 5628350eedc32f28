// Single-node placement: device sets, MIG, node preference, ports, and what stays pending.
import { describe, expect, it } from "vitest";
import { plan } from "../../api/placement/plan.js";
import type { PlaceNode, Replica } from "../../api/placement/types.js";
import { a100Mig, deployment, hgx, input, l40s, MIG_CLASS, model, node, profile } from "./builders.js";

const tp4 = model("l70", [profile("tp4", "h100-80g", 4)]);
const run = (nodes: PlaceNode[], replicas: number, m = tp4, existing: Replica[] = []) =>
  plan(
    input({ nodes, models: [m], deployments: [deployment(m.name, m.name, replicas)], replicas: existing, nextSeq: 10 }),
  );
/** A replica of another deployment holding the given devices (and ports) of a node. */
const holding = (nodeId: string, deviceIds: number[], seq = 1, ports = [8090, 8091]): Replica => ({
  id: `r${seq}`,
  deployment: "other",
  profile: "p",
  fingerprint: "f",
  seq,
  shards: [
    {
      shardId: `r${seq}-s0`,
      replicaId: `r${seq}`,
      nodeId,
      rank: 0,
      nnodes: 1,
      deviceIds,
      visibleDevices: "",
      hcas: [],
      httpPort: ports[0]!,
      leaderAddr: "x",
      leaderPort: ports[1]!,
      fabric: "single",
      env: {},
    },
  ],
});
const cardsOf = (p: ReturnType<typeof plan>) =>
  p.assign.map((r) => `${r.shards[0]!.nodeId}:${r.shards[0]!.visibleDevices}`);

describe("single-node placement", () => {
  it.each([
    { name: "TP=4 on an empty HGX node takes NUMA node 0", held: [], want: ["gpu-1:0,1,2,3"] },
    { name: "TP=4 with card 1 held takes NUMA node 1", held: [1], want: ["gpu-1:4,5,6,7"] },
    {
      name: "TP=4 with cards 1 and 5 held takes the lowest peers across NUMA nodes",
      held: [1, 5],
      want: ["gpu-1:0,2,3,4"],
    },
  ])("$name", ({ held, want }) => {
    const p = run([hgx("gpu-1")], 1, tp4, held.length ? [holding("gpu-1", held)] : []);
    expect(cardsOf(p)).toEqual(want);
  });

  it("keeps a deployment off the nodes its replicas recently failed on while another node fits, and uses them when none does", () => {
    const place = (nodes: PlaceNode[], avoid: string[]) =>
      cardsOf(
        plan(
          input({
            nodes,
            models: [tp4],
            deployments: [deployment("l70", "l70", 1, { avoid })],
            replicas: [],
            nextSeq: 1,
          }),
        ),
      );
    // gpu-1 comes first on node id, but the replica failed there
    expect(place([hgx("gpu-1"), hgx("gpu-2")], [])).toEqual(["gpu-1:0,1,2,3"]);
    expect(place([hgx("gpu-1"), hgx("gpu-2")], ["gpu-1"])).toEqual(["gpu-2:0,1,2,3"]);
    expect(place([hgx("gpu-1")], ["gpu-1"])).toEqual(["gpu-1:0,1,2,3"]);
  });

  it("places two TP=4 replicas on one HGX node, one per NUMA node, with ids from nextSeq", () => {
    const p = run([hgx("gpu-1")], 2);
    expect(cardsOf(p)).toEqual(["gpu-1:0,1,2,3", "gpu-1:4,5,6,7"]);
    expect(p.assign.map((r) => [r.id, r.seq, r.shards[0]!.shardId])).toEqual([
      ["r10", 10, "r10-s0"],
      ["r11", 11, "r11-s0"],
    ]);
    expect(p.assign.map((r) => [r.shards[0]!.httpPort, r.shards[0]!.leaderPort])).toEqual([
      [8000, 8001],
      [8002, 8003],
    ]);
    expect(p.assign[0]!.shards[0]).toMatchObject({
      fabric: "single",
      nnodes: 1,
      rank: 0,
      hcas: [],
      env: {},
      leaderAddr: "10.0.0.5",
    });
  });

  it("prefers the best-fitting node, then weights on local disk, then spread, then node id", () => {
    const l70 = model("l70", [profile("tp4", "h100-80g", 4)]);
    const tight = run([hgx("gpu-a"), hgx("gpu-b")], 1, l70, [holding("gpu-b", [0, 1, 2, 3])]);
    expect(cardsOf(tight)).toEqual(["gpu-b:4,5,6,7"]);
    const weights = run([hgx("gpu-a"), hgx("gpu-b", { weights: ["/models/l70"] })], 1, l70);
    expect(cardsOf(weights)).toEqual(["gpu-b:0,1,2,3"]);
  });

  it("spreads replicas of one deployment over two equal nodes", () => {
    const mine: Replica = { ...holding("gpu-a", [0, 1, 2, 3], 1, [8000, 8001]), deployment: "l70", profile: "tp4" };
    const first = run([hgx("gpu-a"), hgx("gpu-b")], 1);
    mine.fingerprint = first.assign[0]!.fingerprint;
    const p = run([hgx("gpu-a"), hgx("gpu-b")], 2, tp4, [mine, holding("gpu-b", [4, 5, 6, 7], 2)]);
    expect(cardsOf(p)).toEqual(["gpu-b:0,1,2,3"]);
  });

  it("allocates the lowest free ports and skips a node whose range is used up", () => {
    const one = model("one", [profile("p", "l40s-48g", 1)]);
    const nodes = [
      l40s("l-a", { portRange: { first: 9000, last: 9002 } }),
      l40s("l-b", { portRange: { first: 9100, last: 9101 } }),
    ];
    const p = run(nodes, 3, one, [holding("l-a", [3], 1, [9001, 9001])]);
    expect(p.assign.map((r) => `${r.shards[0]!.nodeId}:${r.shards[0]!.httpPort}/${r.shards[0]!.leaderPort}`)).toEqual([
      "l-a:9000/9002",
      "l-b:9100/9101",
    ]);
    expect(p.pending).toEqual([
      { deployment: "one", count: 1, reason: expect.stringContaining("node l-a has no free port in 9000-9002") },
    ]);
  });

  it("gives a MIG profile exactly one instance, named MIG-<uuid> without doubling the prefix", () => {
    const mig = model("small", [profile("mig", MIG_CLASS)]);
    const bare = a100Mig("gpu-2");
    bare.devices = bare.devices.map((d) => (d.id === 1002 ? { ...d, uuid: d.uuid.slice(4) } : d));
    const p = run([bare], 2, mig);
    expect(p.assign.map((r) => [r.shards[0]!.deviceIds, r.shards[0]!.visibleDevices])).toEqual([
      [[1001], "MIG-gpu-2-0-1"],
      [[1002], "MIG-gpu-2-0-2"],
    ]);
  });
});

describe("single-node reasons", () => {
  const mig = model("small", [profile("mig", MIG_CLASS)]);
  it.each([
    {
      name: "not enough free devices on any node",
      nodes: [
        hgx("gpu-3"),
        hgx("gpu-4", { schedulable: false, notSchedulable: "cordoned" }),
        l40s("l-9", { schedulable: false, notSchedulable: "lost" }),
      ],
      existing: [holding("gpu-3", [0, 1, 2, 3, 4, 5])],
      reason:
        "needs 4 free h100-80g on one node; best node gpu-3 has 2 free (6 of 8 held by replicas, node gpu-4 cordoned)",
    },
    {
      name: "a MIG card with nothing carved",
      m: mig,
      nodes: [a100Mig("gpu-2", { carved: false })],
      existing: [holding("gpu-2", [1101]), holding("gpu-2", [1102], 2, [8092, 8093])],
      reason:
        "MIG class a100-80g-mig-3g.40gb: no instance free (2 of 2 held by replicas, card 0 on gpu-2: MIG mode is enabled but no instances are carved: create them (nvidia-smi mig -cgi … -C) or disable MIG)",
    },
    {
      name: "a MIG profile asking for two devices",
      m: model("small", [profile("mig", MIG_CLASS, 1, 1, { tp: 2 })]),
      nodes: [a100Mig("gpu-2")],
      reason:
        "profile mig runs on MIG class a100-80g-mig-3g.40gb but has tp 2: a MIG profile needs tp = pp = gpusPerNode = nodes = 1 (a process opens one MIG device; instances have no NVLink)",
    },
    {
      name: "a device with a problem",
      nodes: [
        node("gpu-5", {
          devices: [
            {
              id: 0,
              label: "0",
              class: "h100-80g",
              card: 0,
              uuid: "u",
              problems: ["3 uncorrectable ECC errors since the driver loaded"],
            },
          ],
        }),
      ],
      reason:
        "needs 4 free h100-80g on one node; none free (GPU 0 on gpu-5: 3 uncorrectable ECC errors since the driver loaded)",
    },
    { name: "no node in the pool", nodes: [hgx("gpu-1", { pool: "dev" })], reason: "no node in pool prod" },
    {
      name: "no node of the class",
      nodes: [l40s("l-1")],
      reason: "no node in pool prod with engine vllm has h100-80g (classes there: l40s-48g)",
    },
    {
      name: "no node with the engine",
      nodes: [hgx("gpu-1", { engines: ["sglang"] })],
      reason: "no node in pool prod has engine vllm",
    },
  ])("$name", ({ nodes, existing, reason, m }) => {
    const p = run(nodes, 1, m ?? tp4, existing ?? []);
    expect(p.assign).toEqual([]);
    expect(p.pending).toEqual([{ deployment: (m ?? tp4).name, count: 1, reason }]);
  });

  it("names the nodeSelector that no node matches, and the engine among the nodes that do", () => {
    const nodes = [hgx("gpu-1", { labels: { gpu: "h100" }, engines: ["sglang"] }), hgx("gpu-2")];
    const d = (sel: Record<string, string>) => deployment("l70", "l70", 1, { nodeSelector: sel });
    const none = plan(input({ nodes, models: [tp4], deployments: [d({ gpu: "b200" })] }));
    expect(none.pending[0]!.reason).toBe("no node in pool prod matches nodeSelector gpu=b200");
    const engine = plan(input({ nodes, models: [tp4], deployments: [d({ gpu: "h100" })] }));
    expect(engine.pending[0]!.reason).toBe("no node in pool prod matching nodeSelector gpu=h100 has engine vllm");
  });

  it("treats the command engine as always installed", () => {
    const cmd = model("l70", [profile("tp4", "h100-80g", 4, 1, { engine: "command" })]);
    expect(run([hgx("gpu-1", { engines: [] })], 1, cmd).assign).toHaveLength(1);
  });

  it("tries the allowed profiles in order and says why each failed", () => {
    const m = model("l70", [profile("tp8", "h100-80g", 8), profile("tp4", "h100-80g", 4), profile("mig", MIG_CLASS)]);
    const d = deployment("l70", "l70", 3, { profiles: ["tp8", "tp4"] });
    const p = plan(
      input({
        nodes: [hgx("gpu-1", { portRange: { first: 8000, last: 8099 } })],
        models: [m],
        deployments: [d],
        replicas: [holding("gpu-1", [0])],
      }),
    );
    expect(p.assign.map((r) => r.profile)).toEqual(["tp4"]);
    expect(p.pending).toEqual([
      {
        deployment: "l70",
        count: 2,
        reason:
          "profile tp8: needs 8 free h100-80g on one node; best node gpu-1 has 3 free (5 of 8 held by replicas); profile tp4: needs 4 free h100-80g on one node; best node gpu-1 has 3 free (5 of 8 held by replicas)",
      },
    ]);
  });
});
