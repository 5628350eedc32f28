import { describe, expect, it } from "vitest";
import { fabricKey, missingDevices, registrationKey } from "../../agent/heartbeat.js";
import { heartbeatOf } from "../../shared/heartbeat-of.js";
import { Heartbeat } from "../../shared/schemas/agent.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { GB200_XML, H100_XML, inventoryFromCapture } from "../helpers/inventory.js";
import { makeShard } from "./engines/shard.js";

const H100 = inventoryFromCapture(H100_XML);
const GB200 = inventoryFromCapture(GB200_XML);
const MIG_UUID = "MIG-1b9b35e0-7c8a-5e3e-9d4c-5d5a1d0f0f00";

/** A copy of `inv` changed by `f`. */
const changed = (inv: Inventory, f: (i: Inventory) => void) => {
  const c = structuredClone(inv);
  f(c);
  return c;
};

/** The A100 MIG capture, its instances given the UUIDs `nvidia-smi -L` would add. */
const MIG = changed(inventoryFromCapture("smi-xml/a100-sxm4-80gb-mig-v12-telegraf.xml"), (i) => {
  for (const [n, m] of i.gpus[0]!.mig!.instances.entries()) {
    m.uuid = n === 0 ? MIG_UUID : `MIG-0000000${n}-0000-0000-0000-000000000000`;
  }
});

describe("heartbeatOf", () => {
  it("carries the dynamic facts of every GPU and port, IMEX and memory, in the Heartbeat schema", () => {
    const hb = heartbeatOf(GB200, [{ shardId: "r1-s0", state: "ready" }]);
    expect(Heartbeat.parse(hb)).toEqual(hb);
    expect(hb.memoryAvailableMiB).toBe(2_000_000);
    expect(hb.gpus).toHaveLength(GB200.gpus.length);
    expect(hb.gpus![0]).toEqual({
      uuid: GB200.gpus[0]!.uuid,
      memoryUsedMiB: 0,
      utilizationPercent: 0,
      fabric: GB200.gpus[0]!.fabric,
      health: GB200.gpus[0]!.health,
      migMemoryUsedMiB: {},
      migProblems: {},
    });
    expect(hb.imex).toEqual(GB200.imex);
    expect(hb.ports).toEqual([
      {
        hca: "mlx5_0",
        port: 1,
        state: "ACTIVE",
        physState: "LinkUp",
        rateGbps: 400,
        linkLayer: "InfiniBand",
        gidPrefix: "fe80:0000:0000:0000",
      },
    ]);
    expect(hb.shards).toEqual([{ shardId: "r1-s0", state: "ready" }]);
  });

  it("gives the memory used per MIG instance index, and leaves out what is not known", () => {
    const hb = heartbeatOf(
      changed(MIG, (i) => {
        delete i.memory.availableMiB;
        delete i.gpus[0]!.mig!.instances[3]!.memoryUsedMiB;
      }),
    );
    expect(hb.gpus![0]!.migMemoryUsedMiB).toEqual({ "0": 12, "1": 12, "2": 12 });
    expect(hb).not.toHaveProperty("memoryAvailableMiB");
    expect(hb).not.toHaveProperty("shards");
    expect(hb.gpus![0]).not.toHaveProperty("utilizationPercent");
    expect(Heartbeat.safeParse(hb).success).toBe(true);
  });

  it("gives each MIG instance's own problems by index, an instance without any as an empty list", () => {
    const hb = heartbeatOf(
      changed(MIG, (i) => {
        i.gpus[0]!.mig!.instances[1]!.problems = ["in use by another process: python3 (pid 7)"];
      }),
    );
    expect(hb.gpus![0]!.migProblems).toEqual({
      "0": [],
      "1": ["in use by another process: python3 (pid 7)"],
      "2": [],
      "3": [],
    });
    expect(Heartbeat.safeParse(hb).success).toBe(true);
  });

  it("carries the IMEX peer list's summary when given one, and the schema holds it to a SHA-256 and a count", () => {
    const imexConfig = { digest: "a".repeat(64), addresses: 18 };
    const hb = heartbeatOf(GB200, [], imexConfig);
    expect(hb.imexConfig).toEqual(imexConfig);
    expect(Heartbeat.parse(hb)).toEqual(hb);
    expect(heartbeatOf(GB200)).not.toHaveProperty("imexConfig");
    for (const bad of [
      { digest: "A".repeat(64), addresses: 1 },
      { digest: "a".repeat(63), addresses: 1 },
      { digest: "a".repeat(64), addresses: -1 },
      { digest: "a".repeat(64), addresses: 1, path: "/etc/nvidia-imex/nodes_config.cfg" },
    ])
      expect(Heartbeat.safeParse({ imexConfig: bad }).success, JSON.stringify(bad)).toBe(false);
  });

  it("sends at most 256 shard reports", () => {
    const shards = Array.from({ length: 300 }, (_, n) => ({ shardId: `s${n}`, state: "ready" }));
    expect(heartbeatOf(H100, shards).shards).toHaveLength(256);
  });
});

describe("registrationKey and fabricKey", () => {
  const gpu0 = (i: Inventory) => i.gpus[0]!;
  it.each<{ name: string; base?: Inventory; f: (i: Inventory) => void; registration: boolean; fabric: boolean }>([
    { name: "GPU memory used", f: (i) => (gpu0(i).memoryUsedMiB = 40_000), registration: false, fabric: false },
    { name: "GPU utilization", f: (i) => (gpu0(i).utilizationPercent = 97), registration: false, fabric: false },
    { name: "host memory available", f: (i) => (i.memory.availableMiB = 12), registration: false, fabric: false },
    { name: "storage free bytes", f: (i) => (i.storage[0]!.freeBytes = 1), registration: false, fabric: false },
    {
      name: "a GPU's temperature and processes",
      f: (i) => {
        gpu0(i).health.temperatureC = 88;
        gpu0(i).health.processes = [{ pid: 9, usedMemoryMiB: 10 }];
      },
      registration: false,
      fabric: false,
    },
    {
      name: "a GPU's fabric state",
      base: GB200,
      f: (i) => (gpu0(i).fabric!.state = "In Progress"),
      registration: false,
      fabric: true,
    },
    {
      name: "a GPU's fabric health",
      base: GB200,
      f: (i) => (gpu0(i).fabric!.health!.summary = "Unhealthy"),
      registration: false,
      fabric: true,
    },
    {
      name: "a GPU's health problems",
      f: (i) => (gpu0(i).health.problems = ["uncorrectable ECC errors"]),
      registration: false,
      fabric: true,
    },
    { name: "the IMEX state", f: (i) => (i.imex.state = "ready"), registration: false, fabric: true },
    { name: "the IMEX channels", f: (i) => (i.imex.channels = 2048), registration: false, fabric: true },
    { name: "the IMEX domain state", f: (i) => (i.imex.domainState = "DOWN"), registration: false, fabric: true },
    { name: "an HCA port's state", f: (i) => (i.hcas[0]!.ports[0]!.state = "DOWN"), registration: false, fabric: true },
    { name: "an HCA port's rate", f: (i) => (i.hcas[0]!.ports[0]!.rateGbps = 200), registration: false, fabric: false },
    {
      name: "MIG instance memory and processes",
      base: MIG,
      f: (i) => {
        gpu0(i).mig!.instances[0]!.memoryUsedMiB = 9000;
        gpu0(i).mig!.instances[0]!.processes = [{ pid: 1 }];
      },
      registration: false,
      fabric: false,
    },
    { name: "a GPU gone", f: (i) => i.gpus.pop(), registration: true, fabric: true },
    { name: "a GPU's UUID", f: (i) => (gpu0(i).uuid = "GPU-new"), registration: true, fabric: true },
    { name: "a GPU's class", f: (i) => (gpu0(i).class = "h100-80g-renamed"), registration: true, fabric: false },
    { name: "the MIG layout", base: MIG, f: (i) => gpu0(i).mig!.instances.pop(), registration: true, fabric: false },
    {
      name: "a MIG instance's problems",
      base: MIG,
      f: (i) => (gpu0(i).mig!.instances[2]!.problems = ["in use by another process: x (pid 3)"]),
      registration: false,
      fabric: true,
    },
    { name: "an engine's version", f: (i) => (i.engines.versions.vllm = "0.12.0"), registration: true, fabric: false },
    { name: "an engine installed", f: (i) => (i.engines.versions.sglang = "0.5.0"), registration: true, fabric: false },
    {
      name: "the weights found",
      f: (i) => i.weights.push({ path: "/models/new", sizeBytes: 1 }),
      registration: true,
      fabric: false,
    },
    {
      name: "an HCA port added",
      f: (i) => i.hcas[0]!.ports.push({ ...i.hcas[0]!.ports[0]!, port: 2 }),
      registration: true,
      fabric: true,
    },
    { name: "the host's driver", f: (i) => (i.host.nvidiaDriver = "590.0"), registration: true, fabric: false },
    {
      name: "a discovery source failing",
      f: (i) => i.errors.push({ source: "ibstat", message: "x" }),
      registration: true,
      fabric: false,
    },
  ])(
    "$name: registration key changes: $registration, fabric key changes: $fabric",
    ({ base = H100, f, registration, fabric }) => {
      const after = changed(base, f);
      expect(registrationKey(after) !== registrationKey(base)).toBe(registration);
      expect(fabricKey(after) !== fabricKey(base)).toBe(fabric);
    },
  );

  it("is the same for two discoveries of an unchanged node", () => {
    expect(registrationKey(structuredClone(GB200))).toBe(registrationKey(GB200));
    expect(fabricKey(structuredClone(GB200))).toBe(fabricKey(GB200));
  });
});

describe("missingDevices", () => {
  it.each([
    { name: "all cards present", inv: H100, visible: "0,1,2,3", want: undefined },
    { name: "the last card", inv: H100, visible: "7", want: undefined },
    {
      name: "one card gone",
      inv: changed(H100, (i) => i.gpus.splice(3, 1)),
      visible: "0,1,2,3",
      want: "GPU 3 is not present on this node",
    },
    { name: "two cards gone", inv: H100, visible: "6,7,8,9", want: "GPU 8, 9 are not present on this node" },
    { name: "no devices at all", inv: H100, visible: "", want: undefined },
    { name: "a MIG instance present", inv: MIG, visible: MIG_UUID, want: undefined },
    {
      name: "a MIG instance gone",
      inv: MIG,
      visible: "MIG-ffffffff-0000-0000-0000-000000000000",
      want: "MIG instance MIG-ffffffff-0000-0000-0000-000000000000 is not present on this node",
    },
    {
      name: "a MIG instance on a node without MIG",
      inv: H100,
      visible: MIG_UUID,
      want: `MIG instance ${MIG_UUID} is not present on this node`,
    },
    {
      name: "a MIG instance whose discovered UUID lacks the MIG- prefix",
      inv: changed(MIG, (i) => (i.gpus[0]!.mig!.instances[0]!.uuid = MIG_UUID.slice(4))),
      visible: MIG_UUID,
      want: undefined,
    },
  ])("$name", ({ inv, visible, want }) => {
    expect(missingDevices(makeShard({ visibleDevices: visible }), inv)).toBe(want);
  });
});
