import { describe, expect, it } from "vitest";
import { inventoryEvents } from "../../api/nodes/events.js";
import { applyHeartbeat } from "../../api/nodes/inventory-merge.js";
import { domainKey, isJoined, notJoinedReason } from "../../shared/fabric.js";
import { Heartbeat } from "../../shared/schemas/agent.js";
import { GB200_XML, inventoryFromCapture } from "../helpers/inventory.js";

const tray = () => inventoryFromCapture(GB200_XML);
const hb = (body: object) => Heartbeat.parse(body);

describe("fabric rules", () => {
  const ok = {
    state: "Completed",
    status: "Success",
    clusterUuid: "3482beb4-a3cd-48a4-9b6c-a6ba43bc59a4",
    cliqueId: "32766",
  };
  it.each([
    [ok, true, "3482beb4-a3cd-48a4-9b6c-a6ba43bc59a4.32766", undefined],
    [
      { ...ok, clusterUuid: "00000000-0000-0000-0000-000000000000", cliqueId: "0" },
      false,
      undefined,
      "not in a multi-node NVLink domain (cluster UUID is zero)",
    ],
    [{ ...ok, state: "In Progress" }, false, "3482beb4-a3cd-48a4-9b6c-a6ba43bc59a4.32766", "fabric In Progress"],
    [
      { ...ok, status: "Insufficient Resources" },
      false,
      "3482beb4-a3cd-48a4-9b6c-a6ba43bc59a4.32766",
      "fabric status Insufficient Resources",
    ],
    [undefined, false, undefined, "no NVLink fabric reported"],
  ])("%o → joined %s", (f, joined, key, reason) => {
    expect(isJoined(f)).toBe(joined);
    expect(domainKey(f)).toBe(key);
    expect(notJoinedReason(f)).toBe(reason);
  });
});

describe("applyHeartbeat", () => {
  it("updates the named GPUs, IMEX, memory and ports and leaves the rest as registered", () => {
    const inv = tray();
    const g0 = inv.gpus[0]!;
    const next = applyHeartbeat(
      inv,
      hb({
        gpus: [
          {
            uuid: g0.uuid,
            memoryUsedMiB: 5000,
            utilizationPercent: 93,
            fabric: { ...g0.fabric!, health: { bandwidth: "Degraded" } },
          },
        ],
        imex: { state: "ready", channels: 1 },
        ports: [{ hca: "mlx5_0", port: 1, state: "DOWN", physState: "Disabled" }],
        memoryAvailableMiB: 42,
      }),
    );
    expect(next.gpus[0]).toMatchObject({
      memoryUsedMiB: 5000,
      utilizationPercent: 93,
      fabric: { health: { bandwidth: "Degraded" } },
    });
    expect(next.gpus.slice(1)).toEqual(inv.gpus.slice(1));
    expect(next.imex).toEqual({ state: "ready", channels: 1 });
    expect(next.hcas[0]!.ports[0]).toEqual({ port: 1, state: "DOWN", physState: "Disabled" });
    expect(next.memory).toEqual({ ...inv.memory, availableMiB: 42 });
    expect(inv.gpus[0]!.memoryUsedMiB).toBe(0);
  });

  it("sets the memory used of MIG instances by index", () => {
    const inv = tray();
    inv.gpus[1]!.mig = {
      current: "Enabled",
      pending: "Enabled",
      instances: [
        { index: 0, memoryUsedMiB: 1, processes: [] },
        { index: 1, processes: [] },
      ],
    };
    const next = applyHeartbeat(inv, hb({ gpus: [{ uuid: inv.gpus[1]!.uuid, migMemoryUsedMiB: { "1": 777 } }] }));
    expect(next.gpus[1]!.mig!.instances.map((m) => m.memoryUsedMiB)).toEqual([1, 777]);
  });

  it("sets and clears each MIG instance's own problems by index", () => {
    const inv = tray();
    inv.gpus[1]!.mig = {
      current: "Enabled",
      pending: "Enabled",
      instances: [
        { index: 0, processes: [], problems: ["in use by another process: a (pid 1)"] },
        { index: 1, processes: [] },
      ],
    };
    const uuid = inv.gpus[1]!.uuid;
    const next = applyHeartbeat(
      inv,
      hb({ gpus: [{ uuid, migProblems: { "0": [], "1": ["in use by another process: b (pid 2)"] } }] }),
    );
    expect(next.gpus[1]!.mig!.instances.map((m) => m.problems)).toEqual([
      undefined,
      ["in use by another process: b (pid 2)"],
    ]);
    // a heartbeat of an older agent, without migProblems, leaves them as registered
    expect(
      applyHeartbeat(inv, hb({ gpus: [{ uuid, migMemoryUsedMiB: { "0": 5 } }] })).gpus[1]!.mig!.instances[0]!.problems,
    ).toEqual(["in use by another process: a (pid 1)"]);
  });
});

describe("inventoryEvents", () => {
  const drop = (inv: ReturnType<typeof tray>, which: number[]) =>
    applyHeartbeat(
      inv,
      hb({ gpus: which.map((i) => ({ uuid: inv.gpus[i]!.uuid, fabric: { state: "In Progress" } })) }),
    );

  it("reports a whole tray leaving the fabric as one event", () => {
    const before = tray();
    const ev = inventoryEvents("tray-3", before, drop(before, [0, 1, 2, 3]));
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ type: "fabric_left", nodeId: "tray-3", data: { gpus: [0, 1, 2, 3] } });
    expect(ev[0]!.message).toBe(
      "tray-3: all 4 GPUs left NVLink domain 00000001-0000-0000-0000-000000000001.2 (fabric In Progress)",
    );
  });

  it("names the GPUs when only some leave, and reports them joining again", () => {
    const before = tray();
    const after = drop(before, [2]);
    expect(inventoryEvents("t", before, after).map((e) => e.message)).toEqual([
      "t: GPU 2 left NVLink domain 00000001-0000-0000-0000-000000000001.2 (fabric In Progress)",
    ]);
    expect(inventoryEvents("t", after, before).map((e) => e.message)).toEqual([
      "t: GPU 2 joined NVLink domain 00000001-0000-0000-0000-000000000001.2",
    ]);
  });

  it("reports IMEX and port changes, and nothing when nothing changed", () => {
    const before = tray();
    expect(inventoryEvents("t", before, before)).toEqual([]);
    const after = applyHeartbeat(
      before,
      hb({ imex: { state: "down", channels: 0 }, ports: [{ hca: "mlx5_0", port: 1, state: "INIT" }] }),
    );
    expect(inventoryEvents("t", before, after).map((e) => [e.type, e.message])).toEqual([
      ["imex_changed", "t: IMEX absent (0 channels) → down (0 channels)"],
      ["hca_port_changed", "t: mlx5_0 port 1 ACTIVE → INIT"],
    ]);
  });
});
