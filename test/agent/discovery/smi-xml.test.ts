import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseSmiXml } from "../../../agent/discovery/smi-xml.js";
import { domainKey, isJoined } from "../../../shared/fabric.js";
import { Gpu } from "../../../shared/schemas/gpu.js";
import { FIXTURES, fixture, GB200_XML } from "../../helpers/inventory.js";

/**
 * What each real capture holds, read off the files: cards, name, class, MiB, joined cards, domain key, MIG instances.
 */
const CAPTURES: [string, number, string, string, number, number, string | undefined, number][] = [
  [
    "MOCK-gb200-2gpu-fabric-route-unhealthy-580.65.06-k8stestinfra.xml",
    2,
    "NVIDIA GB200",
    "gb200-192g",
    196608,
    2,
    "00000000-0000-0000-0000-000000000001.0",
    0,
  ],
  ["a100-sxm4-40gb-1gpu-570.148.08-k8stestinfra.xml", 1, "NVIDIA A100-SXM4-40GB", "a100-40g", 40960, 0, undefined, 0],
  ["a100-sxm4-80gb-mig-v12-telegraf.xml", 1, "NVIDIA A100-SXM4-80GB", "a100-80g", 81920, 0, undefined, 4],
  ["a10g-v11-telegraf.xml", 1, "NVIDIA A10G", "a10g-22g", 23028, 0, undefined, 0],
  ["dual-rtx-a5000-v13-telegraf.xml", 2, "NVIDIA RTX A5000", "rtx-a5000-24g", 24564, 0, undefined, 0],
  [
    "gb200-4gpu-nvl-fabric-clique2-580.173.02-k8stestinfra.xml",
    4,
    "NVIDIA GB200",
    "gb200-185g",
    189471,
    4,
    "00000001-0000-0000-0000-000000000001.2",
    0,
  ],
  [
    "gb300-4gpu-nvl-fabric-clique32766-580.173.02-k8stestinfra.xml",
    4,
    "NVIDIA GB300",
    "gb300-278g",
    284208,
    4,
    "00000001-0000-0000-0000-000000000001.32766",
    0,
  ],
  [
    "hgx-8x-b200-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml",
    8,
    "NVIDIA B200",
    "b200-179g",
    183359,
    0,
    undefined,
    0,
  ],
  [
    "hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml",
    8,
    "NVIDIA H100 80GB HBM3",
    "h100-80g",
    81559,
    0,
    undefined,
    0,
  ],
  ["l40s-1gpu-595.91.07-k8stestinfra.xml", 1, "NVIDIA L40S", "l40s-45g", 46068, 0, undefined, 0],
  ["quadro-p400-418-nodtd-telegraf.xml", 1, "Quadro P400", "p400-2g", 1998, 0, undefined, 0],
  [
    "rtx-4000-sff-ada-v13-telegraf.xml",
    1,
    "NVIDIA RTX 4000 SFF Ada Generation",
    "rtx-4000-sff-ada-generation-20g",
    20475,
    0,
    undefined,
    0,
  ],
  [
    "rtx-pro-6000-blackwell-maxq-v13-telegraf.xml",
    1,
    "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
    "rtx-pro-6000-blackwell-max-q-workstation-edition-96g",
    97887,
    0,
    undefined,
    0,
  ],
  ["tesla-t4-1gpu-595.91.07-k8stestinfra.xml", 1, "Tesla T4", "t4-15g", 15360, 0, undefined, 0],
];

describe("every real nvidia-smi -q -x capture", () => {
  it("is in the table below", () => {
    const real = readdirSync(join(FIXTURES, "smi-xml")).filter((f) => !f.startsWith("CRAFTED-"));
    expect(CAPTURES.map((c) => c[0]).sort()).toEqual(real.sort());
  });

  it.each(CAPTURES)(
    "%s: %i × %s (%s, %i MiB), %i joined, domain %s, %i MIG instances",
    (file, count, name, cls, mib, joined, domain, migs) => {
      const { gpus } = parseSmiXml(fixture(`smi-xml/${file}`));
      expect(gpus).toHaveLength(count);
      for (const g of gpus)
        expect({ name: g.name, class: g.class, mib: g.memoryTotalMiB }).toEqual({ name, class: cls, mib });
      expect(gpus.filter((g) => isJoined(g.fabric))).toHaveLength(joined);
      expect(new Set(gpus.map((g) => domainKey(g.fabric)))).toEqual(new Set([domain]));
      expect(gpus.reduce((n, g) => n + (g.mig?.instances.length ?? 0), 0)).toBe(migs);
      expect(new Set(gpus.map((g) => g.uuid)).size).toBe(count);
    },
  );

  it("reads the mock GB200's unhealthy route on GPU 1", () => {
    const [g0, g1] = parseSmiXml(
      fixture("smi-xml/MOCK-gb200-2gpu-fabric-route-unhealthy-580.65.06-k8stestinfra.xml"),
    ).gpus;
    expect(g0!.fabric?.health).toMatchObject({ summary: "Healthy", routeUnhealthy: "False" });
    expect(g1!.fabric?.health).toMatchObject({ summary: "Unhealthy", routeUnhealthy: "True" });
  });
});

describe("parseSmiXml", () => {
  it.each(readdirSync(join(FIXTURES, "smi-xml")))("parses %s into valid wire GPUs", (f) => {
    const xml = fixture(`smi-xml/${f}`);
    const { gpus } = parseSmiXml(xml);
    expect(gpus.length).toBe((xml.match(/<gpu id=/g) ?? []).length);
    for (const g of gpus) expect(Gpu.parse(g)).toEqual(g);
  });

  it("reads a GB200 tray's fabric and platform info", () => {
    const g = parseSmiXml(fixture(GB200_XML)).gpus[0]!;
    expect(g.fabric).toEqual({
      state: "Completed",
      status: "Success",
      cliqueId: "2",
      clusterUuid: "00000001-0000-0000-0000-000000000001",
      health: {
        summary: "Healthy",
        bandwidth: "Full",
        routeRecoveryInProgress: "False",
        routeUnhealthy: "False",
        accessTimeoutRecovery: "False",
      },
    });
    expect(g.platform).toMatchObject({ trayIndex: 4, slotNumber: 14, moduleId: 2 });
  });

  it("reads a MIG card's instances and leaves its utilization out", () => {
    const g = parseSmiXml(fixture("smi-xml/a100-sxm4-80gb-mig-v12-telegraf.xml")).gpus[0]!;
    expect(g.class).toBe("a100-80g");
    expect(g.utilizationPercent).toBeUndefined();
    expect(g.mig?.instances.map((m) => [m.index, m.gpuInstanceId, m.memoryTotalMiB])).toEqual([
      [0, 3, 19968],
      [1, 4, 19968],
      [2, 5, 19968],
      [3, 6, 19968],
    ]);
  });

  it("puts a process on the MIG instance its GPU and compute instance ids name; one naming none stays on the card", () => {
    const xml = fixture("smi-xml/CRAFTED-a100-mig-process-on-one-instance.xml");
    const [g] = parseSmiXml(xml).gpus;
    expect(g!.mig!.instances.map((m) => m.processes.map((p) => p.pid))).toEqual([[4242], [], [], []]);
    expect(g!.health.processes).toEqual([]);
    const unattached = parseSmiXml(
      xml.replace(
        "<gpu_instance_id>3</gpu_instance_id>\n                <compute_instance_id>0</compute_instance_id>\n                <pid>",
        "<gpu_instance_id>N/A</gpu_instance_id>\n                <compute_instance_id>N/A</compute_instance_id>\n                <pid>",
      ),
    ).gpus[0]!;
    expect(unattached.mig!.instances.flatMap((m) => m.processes)).toEqual([]);
    expect(unattached.health.processes.map((p) => p.pid)).toEqual([4242]);
  });

  it("lists the processes on a card", () => {
    const g = parseSmiXml(fixture("smi-xml/a10g-v11-telegraf.xml")).gpus[0]!;
    expect(g.health.processes[0]).toEqual({ pid: 725, name: "/usr/lib/xorg/Xorg", usedMemoryMiB: 22 });
  });

  it("leaves fabric out on drivers that do not report it", () => {
    expect(parseSmiXml(fixture("smi-xml/a10g-v11-telegraf.xml")).gpus[0]!.fabric).toBeUndefined();
    expect(parseSmiXml(fixture("smi-xml/l40s-1gpu-595.91.07-k8stestinfra.xml")).gpus[0]!.fabric).toBeUndefined();
  });

  it("names the source when the output is truncated, empty or not XML", () => {
    const xml = fixture(GB200_XML);
    expect(() => parseSmiXml(xml.slice(0, xml.length / 2))).toThrow(
      "nvidia-smi -q -x: output is truncated or not XML (no closing </nvidia_smi_log>)",
    );
    expect(() => parseSmiXml("")).toThrow("nvidia-smi -q -x: empty output");
    expect(() => parseSmiXml("\u0000\u0001PK\u0003\u0004garbage")).toThrow(
      /^nvidia-smi -q -x: output is truncated or not XML/,
    );
    expect(() => parseSmiXml("<nvidia_smi_log><gpu><uuid>x</gpu></nvidia_smi_log>")).toThrow(
      /^nvidia-smi -q -x: malformed XML/,
    );
  });

  it("names the source when the XML is malformed", () => {
    expect(() => parseSmiXml("<nvidia_smi_log><driver_version>1</nvidia_smi_log>")).toThrow(
      /^nvidia-smi -q -x: malformed XML at line 1/,
    );
    expect(() => parseSmiXml("<other></other></nvidia_smi_log>")).toThrow(/^nvidia-smi -q -x: malformed XML/);
  });
});
