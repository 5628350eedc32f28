import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseSmiXml } from "../../agent/discovery/smi-xml.js";
import { Gpu } from "../../shared/schemas/gpu.js";
import { FIXTURES, GB200_XML, fixture } from "../helpers/inventory.js";

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
      health: { summary: "Healthy", bandwidth: "Full", routeRecoveryInProgress: "False", routeUnhealthy: "False", accessTimeoutRecovery: "False" },
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

  it("leaves fabric out on drivers that do not report it", () => {
    expect(parseSmiXml(fixture("smi-xml/a10g-v11-telegraf.xml")).gpus[0]!.fabric).toBeUndefined();
    expect(parseSmiXml(fixture("smi-xml/l40s-1gpu-595.91.07-k8stestinfra.xml")).gpus[0]!.fabric).toBeUndefined();
  });

  it("names the source when the XML is malformed", () => {
    expect(() => parseSmiXml("<nvidia_smi_log><gpu>")).toThrow(/^nvidia-smi -q -x: malformed XML at line 1/);
    expect(() => parseSmiXml("<other/>")).toThrow("nvidia-smi -q -x: no <nvidia_smi_log> element");
  });
});
