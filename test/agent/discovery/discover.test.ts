import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runnerWith } from "../../../agent/discovery/exec.js";
import { type DiscoverOptions, discover } from "../../../agent/discovery/index.js";
import type { NvmlSnapshot } from "../../../agent/discovery/nvml.js";
import { devicesOf } from "../../../shared/classes.js";
import { nodeFabric } from "../../../shared/fabric.js";
import { Inventory } from "../../../shared/schemas/inventory.js";
import { tempDir } from "../../helpers/db.js";
import { FIXTURES } from "../../helpers/inventory.js";
import { ROOT } from "../../helpers/process.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const FAKE_SMI = join(ROOT, "agent", "sim", "fake-nvidia-smi");
const fx = (p: string) => join(FIXTURES, p);

/** Options that read nothing of this machine: a fake host root, no IMEX, no engines, the fake nvidia-smi. */
function offline(env: Record<string, string>, extra: DiscoverOptions = {}): DiscoverOptions {
  const host = join(tmp.dir, "host");
  mkdirSync(join(host, "etc"), { recursive: true });
  mkdirSync(join(host, "proc"), { recursive: true });
  writeFileSync(join(host, "etc", "os-release"), 'ID=ubuntu\nVERSION_ID="24.04"\nVERSION_CODENAME=noble\n');
  writeFileSync(
    join(host, "proc", "cpuinfo"),
    "processor\t: 0\nmodel name\t: AMD EPYC 9654\nflags\t\t: sse avx2 avx512f\n\nprocessor\t: 1\n",
  );
  writeFileSync(join(host, "proc", "meminfo"), "MemTotal:       2113265664 kB\nMemAvailable:   2000000000 kB\n");
  return {
    nvidiaSmi: FAKE_SMI,
    hostRoot: host,
    ibRoot: join(tmp.dir, "no-ib"),
    imexCtl: join(tmp.dir, "no-imex-ctl"),
    imexChannelsDir: join(tmp.dir, "no-channels"),
    engineProbes: [],
    run: runnerWith(env),
    ...extra,
  };
}

describe("discover", () => {
  it("composes an 8-GPU HGX node: cards, topology, IB fabric attachment, host", async () => {
    const inv = await discover(
      offline(
        {
          FAKE_SMI_XML: fx("smi-xml/hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml"),
          FAKE_SMI_L: fx("smi-L/CRAFTED-hgx-8x-h100-from-k8stestinfra-xml.txt"),
          FAKE_SMI_TOPO: fx("topo/hgx-h100-8x-nv18-8nic-legend-spaces-sglang30401.txt"),
        },
        {
          ibRoot: fx("ib-sysfs/gpud-h100-sys-class-infiniband"),
          fabrics: [{ name: "ib-east", hcas: ["mlx5_0", "mlx5_1", "mlx5_2"] }],
        },
      ),
    );
    expect(Inventory.parse(inv)).toEqual(inv);
    expect(inv.gpuSource).toBe("nvidia-smi");
    expect(inv.gpus.map((g) => g.class)).toEqual(Array(8).fill("h100-80g"));
    expect(inv.gpus[0]!.nvlinkPeers).toEqual([1, 2, 3, 4, 5, 6, 7].map((gpu) => ({ gpu, links: 18 })));
    expect(inv.gpus[0]!.nearestNic).toBe("mlx5_0");
    expect(inv.host).toMatchObject({
      osId: "ubuntu",
      osVersion: "24.04",
      cpuCount: 2,
      cpuFlags: ["avx2", "avx512f", "sse"],
      nvidiaDriver: "580.105.08",
    });
    expect(inv.memory).toEqual({ totalMiB: 2063736, availableMiB: 1953125 });
    expect(inv.fabrics).toEqual([{ fabric: "ib-east", hcas: ["mlx5_0", "mlx5_1"], rateGbps: 400 }]);
    expect(inv.errors).toEqual([
      { source: "agent.yaml fabrics", message: "fabric ib-east names mlx5_2, which this node does not have" },
    ]);
    expect(nodeFabric(inv.gpus)).toEqual({ domains: [], joined: 0, total: 8, degraded: [] });
  });

  it("shows a MIG card as its instances, named by -L", async () => {
    const inv = await discover(
      offline({
        FAKE_SMI_XML: fx("smi-xml/a100-sxm4-80gb-mig-v12-telegraf.xml"),
        FAKE_SMI_L: fx("smi-L/CRAFTED-a100-80gb-mig-4x1g.20gb-for-telegraf-xml.txt"),
      }),
    );
    const devices = devicesOf(inv.gpus);
    expect(devices.map((d) => [d.label, d.class, d.id])).toEqual(
      [0, 1, 2, 3].map((i) => [`0/mig${i}`, "a100-80g-mig-1g.20gb", 1000 + i]),
    );
    expect(inv.gpus[0]!.mig!.instances[1]).toMatchObject({
      uuid: "MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb",
      profile: "1g.20gb",
      memoryTotalMiB: 19968,
    });
    expect(inv.gpus[0]!.utilizationPercent).toBeUndefined();
    expect(inv.errors.map((e) => e.source)).toEqual(["nvidia-smi topo -m"]);
  });

  it.each([
    ["CRAFTED-a100-mig-enabled-no-instances.xml", "MIG mode is enabled but no instances are carved"],
    ["CRAFTED-a100-mig-disable-pending.xml", "MIG mode change pending (current Enabled, pending Disabled)"],
  ])("%s: a problem and no placeable device", async (file, problem) => {
    const inv = await discover(
      offline({
        FAKE_SMI_XML: fx(`smi-xml/${file}`),
        FAKE_SMI_L: fx("smi-L/CRAFTED-a100-80gb-mig-4x1g.20gb-for-telegraf-xml.txt"),
      }),
    );
    expect(inv.gpus[0]!.health.problems.join("\n")).toContain(problem);
    expect(devicesOf(inv.gpus)).toEqual([]);
  });

  it.each([
    [
      "gb200-4gpu-nvl-fabric-clique2-580.173.02-k8stestinfra.xml",
      { domain: "00000001-0000-0000-0000-000000000001.2", joined: 4, health: "Healthy", degraded: [] },
    ],
    ["CRAFTED-gb200-tray-fabric-in-progress.xml", { domain: "00000001-0000-0000-0000-000000000001.2", joined: 0 }],
    ["CRAFTED-gb200-gpu2-limited-capacity.xml", { joined: 4, health: "Limited Capacity", degraded: [2] }],
    [
      "CRAFTED-gb200-gpu3-mixed-cluster-uuid.xml",
      { domains: ["00000001-0000-0000-0000-000000000001.2", "00000002-0000-0000-0000-000000000002.2"] },
    ],
  ])("%s: the node's fabric", async (file, want) => {
    const inv = await discover(offline({ FAKE_SMI_XML: fx(`smi-xml/${file}`) }));
    const f = nodeFabric(inv.gpus);
    expect(f).toMatchObject(want);
    if (file.includes("mixed")) expect(f.domain).toBeUndefined();
  });

  it("reports what failed and keeps the rest: no nvidia-smi at all", async () => {
    const inv = await discover(
      offline(
        {},
        { nvidiaSmi: join(tmp.dir, "nvidia-smi-missing"), ibRoot: fx("ib-sysfs/gpud-h100-sys-class-infiniband") },
      ),
    );
    expect(inv.gpuSource).toBe("unavailable");
    expect(inv.gpus).toEqual([]);
    expect(inv.hcas).toHaveLength(9);
    expect(inv.errors.map((e) => e.source)).toEqual(["nvidia-smi -q -x", "nvidia-smi -L", "nvidia-smi topo -m"]);
    expect(inv.errors[0]!.message).toContain("not found");
  });

  it("reports garbage from nvidia-smi as an error naming the source", async () => {
    const junk = join(tmp.dir, "junk.bin");
    writeFileSync(junk, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 1, 2, 0xff, 0xfe]));
    const inv = await discover(offline({ FAKE_SMI_XML: junk, FAKE_SMI_L: junk, FAKE_SMI_TOPO: junk }));
    expect(inv.gpuSource).toBe("unavailable");
    expect(inv.errors.map((e) => e.source)).toEqual(["nvidia-smi -q -x", "nvidia-smi -L", "nvidia-smi topo -m"]);
    expect(inv.errors[0]!.message).toMatch(/^nvidia-smi -q -x: /);
  });

  it("falls back to nvidia-smi when NVML cannot be loaded, and says so", async () => {
    const inv = await discover(
      offline(
        { FAKE_SMI_XML: fx("smi-xml/l40s-1gpu-595.91.07-k8stestinfra.xml") },
        {
          nvml: () => {
            throw new Error("Failed to load shared library libnvidia-ml.so.1");
          },
        },
      ),
    );
    expect(inv.gpuSource).toBe("nvidia-smi");
    expect(inv.gpus[0]!.class).toBe("l40s-45g");
    expect(inv.errors[0]).toEqual({
      source: "nvml",
      message: "Failed to load shared library libnvidia-ml.so.1; read the GPUs with nvidia-smi instead",
    });
  });

  it("applies class overrides from agent.yaml, to MIG instances too", async () => {
    const inv = await discover(
      offline(
        {
          FAKE_SMI_XML: fx("smi-xml/a100-sxm4-80gb-mig-v12-telegraf.xml"),
          FAKE_SMI_L: fx("smi-L/CRAFTED-a100-80gb-mig-4x1g.20gb-for-telegraf-xml.txt"),
        },
        { classOverrides: { "NVIDIA A100-SXM4-80GB": "a100-sxm-80g" } },
      ),
    );
    expect(devicesOf(inv.gpus)[0]!.class).toBe("a100-sxm-80g-mig-1g.20gb");
  });

  it("reports an installed engine's non-CUDA backend from agent.yaml, and none for an engine not installed", async () => {
    const inv = await discover(
      offline(
        { FAKE_SMI_XML: fx("smi-xml/l40s-1gpu-595.91.07-k8stestinfra.xml") },
        {
          engineProbes: [{ engine: "llamacpp", command: ["sh", "-c", "echo version: 6123"] }],
          engineBackends: { llamacpp: "vulkan", sglang: "vulkan", vllm: "cuda" },
        },
      ),
    );
    expect(inv.engines).toEqual({
      probed: ["llamacpp"],
      versions: { llamacpp: "6123" },
      backends: { llamacpp: "vulkan" },
    });
    expect(Inventory.parse(inv).engines.backends).toEqual({ llamacpp: "vulkan" });
  });

  it("with NVML, still reads what only nvidia-smi -q -x gives: a process on one MIG instance keeps it busy", async () => {
    // NVML sees the A100 of the capture, in MIG mode with its four instances, and no processes (it is not read for them)
    const snapshot: NvmlSnapshot = {
      driverVersion: "535.54.03",
      cudaVersion: "12.2",
      gpus: [
        {
          index: 0,
          name: "NVIDIA A100-SXM4-80GB",
          uuid: "GPU-513536b6-7d19-9063-b049-1e69664bb298",
          memoryTotalBytes: 81920 * 2 ** 20,
          memoryUsedBytes: 0,
          pciBusId: "00000000:01:00.0",
          migMode: { current: 1, pending: 1 },
          mig: [3, 4, 5, 6].map((gi, index) => ({
            index,
            uuid: `MIG-0000000${index}-aaaa-bbbb-cccc-000000000000`,
            name: "NVIDIA A100-SXM4-80GB MIG 1g.20gb",
            memoryTotalBytes: 19968 * 2 ** 20,
            memoryUsedBytes: 0,
            gpuInstanceId: gi,
            computeInstanceId: 0,
          })),
          nvlinkRemote: [],
        },
      ],
    };
    const inv = await discover(
      offline(
        { FAKE_SMI_XML: fx("smi-xml/CRAFTED-a100-mig-process-on-one-instance.xml") },
        { nvml: () => ({ snapshot: () => snapshot }) },
      ),
    );
    expect(inv.gpuSource).toBe("nvml");
    const instances = inv.gpus[0]!.mig!.instances;
    expect(instances.map((m) => m.processes.map((p) => p.pid))).toEqual([[4242], [], [], []]);
    expect(instances[0]!.problems).toEqual(["in use by another process: python3 (pid 4242)"]);
    // the card's slowdown temperature (and ECC, retired pages, utilization) come from -q -x too
    expect(inv.gpus[0]!.health.temperatureSlowdownC).toBe(89);
    expect(Inventory.parse(inv)).toEqual(inv);
  });

  it("with NVML and no answer from nvidia-smi -q -x, says which facts are unknown", async () => {
    const snapshot: NvmlSnapshot = { driverVersion: "580.105.08", cudaVersion: "13.0", gpus: [] };
    const inv = await discover(offline({}, { nvml: () => ({ snapshot: () => snapshot }) }));
    expect(inv.gpuSource).toBe("nvml");
    expect(inv.errors).toContainEqual({
      source: "nvml",
      message: "without nvidia-smi -q -x, the cards' processes, ECC, retired pages and utilization are unknown",
    });
  });
});
