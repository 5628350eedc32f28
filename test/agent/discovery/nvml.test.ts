import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fabricFromNvml, gpusFromNvml, nvlinkPeers } from "../../../agent/discovery/nvml.js";
import { loadNvml } from "../../../agent/discovery/nvml-koffi.js";
import { Gpu } from "../../../shared/schemas/gpu.js";
import { tempDir } from "../../helpers/db.js";
import { FIXTURES } from "../../helpers/inventory.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("fabricFromNvml", () => {
  it("says what nvidia-smi says", () => {
    expect(
      fabricFromNvml({
        state: 3,
        status: 0,
        clusterUuid: "3482beb4-a3cd-48a4-9b6c-a6ba43bc59a4",
        cliqueId: 32766,
        healthMask: 2 | (2 << 2) | (2 << 4) | (2 << 6),
      }),
    ).toEqual({
      state: "Completed",
      status: "Success",
      clusterUuid: "3482beb4-a3cd-48a4-9b6c-a6ba43bc59a4",
      cliqueId: "32766",
      health: {
        bandwidth: "Full",
        routeRecoveryInProgress: "False",
        routeUnhealthy: "False",
        accessTimeoutRecovery: "False",
      },
    });
    expect(fabricFromNvml({ state: 2, status: 0, clusterUuid: "x", cliqueId: 1, healthMask: 1 })).toMatchObject({
      state: "In Progress",
      health: { bandwidth: "Degraded" },
    });
    expect(fabricFromNvml({ state: 0, status: 0, clusterUuid: "", cliqueId: 0, healthMask: 0 })).toBeUndefined();
  });
});

describe("nvlinkPeers", () => {
  it("counts direct links, and joins every GPU wired to NVSwitches", () => {
    const direct = nvlinkPeers([
      {
        index: 0,
        pciBusId: "00000000:18:00.0",
        nvlinkRemote: ["00000000:2A:00.0", "00000000:2A:00.0", "0000:2a:00.0"],
      },
      { index: 1, pciBusId: "00000000:2A:00.0", nvlinkRemote: ["00000000:18:00.0"] },
      { index: 2, pciBusId: "00000000:3A:00.0", nvlinkRemote: [] },
    ]);
    expect(Object.fromEntries(direct)).toEqual({ 0: [{ gpu: 1, links: 3 }], 1: [{ gpu: 0, links: 1 }], 2: [] });
    const sw = Array.from({ length: 8 }, (_, i) => ({
      index: i,
      pciBusId: `00000000:${10 + i}:00.0`,
      nvlinkRemote: Array(18).fill("00000000:C5:00.0"),
    }));
    expect(nvlinkPeers(sw).get(3)).toEqual([0, 1, 2, 4, 5, 6, 7].map((gpu) => ({ gpu, links: 18 })));
  });
});

describe("loadNvml on a fake libnvidia-ml.so.1", () => {
  it("fails with the loader's reason when the library is absent", () => {
    expect(() => loadNvml(join(tmp.dir, "missing.so"))).toThrow(/Failed to load shared library/);
  });

  it("reads cards, MIG instances, fabric and NVLink through koffi", () => {
    const lib = join(tmp.dir, "libnvidia-ml.so.1");
    execFileSync("cc", ["-shared", "-fPIC", "-o", lib, join(FIXTURES, "CRAFTED-fake-libnvidia-ml.c")]);
    const snap = loadNvml(lib).snapshot();
    expect(snap.driverVersion).toBe("580.105.08");
    expect(snap.cudaVersion).toBe("13.0");
    const gpus = gpusFromNvml(snap);
    for (const g of gpus) expect(Gpu.parse(g)).toEqual(g);
    expect(gpus[0]).toMatchObject({
      index: 0,
      name: "NVIDIA H100 80GB HBM3",
      class: "h100-80g",
      memoryTotalMiB: 81559,
      memoryUsedMiB: 1024,
      computeCapability: "9.0",
      pciBusId: "00000000:18:00.0",
      nvlinkPeers: [{ gpu: 1, links: 2 }],
      fabric: {
        state: "Completed",
        status: "Success",
        clusterUuid: "30313233-3435-3637-3839-3a3b3c3d3e3f",
        cliqueId: "32766",
        health: { bandwidth: "Full" },
      },
      health: { temperatureC: 40 },
    });
    expect(gpus[0]!.mig).toBeUndefined();
    expect(gpus[1]!.mig).toEqual({
      current: "Enabled",
      pending: "Enabled",
      instances: [
        {
          index: 0,
          uuid: "MIG-00000000-aaaa-bbbb-cccc-000000000000",
          profile: "3g.40gb",
          class: "a100-80g-mig-3g.40gb",
          gpuInstanceId: 2,
          computeInstanceId: 0,
          memoryTotalMiB: 40192,
          memoryUsedMiB: 13,
          processes: [],
        },
        {
          index: 1,
          uuid: "MIG-00000001-aaaa-bbbb-cccc-000000000000",
          profile: "1g.10gb",
          class: "a100-80g-mig-1g.10gb",
          gpuInstanceId: 9,
          computeInstanceId: 0,
          memoryTotalMiB: 9728,
          memoryUsedMiB: 13,
          processes: [],
        },
      ],
    });
  });
});
