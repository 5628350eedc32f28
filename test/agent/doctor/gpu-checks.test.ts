import { describe, expect, it } from "vitest";
import {
  checkDriver,
  checkEcc,
  checkMemoryRepair,
  checkMig,
  checkNvml,
  checkProcesses,
  checkTemperature,
} from "../../../agent/doctor/gpu-checks.js";
import type { Inventory } from "../../../shared/schemas/inventory.js";
import { A100_MIG_L, A100_MIG_XML, GB200_XML, H100_XML, inventoryOf } from "./inputs.js";

const h100 = () => inventoryOf(H100_XML);
/** A copy of the H100 node with `edit` applied to GPU `i` (crafted from the real capture). */
function h100With(i: number, edit: (g: Inventory["gpus"][number]) => void): Inventory {
  const inv = h100();
  edit(inv.gpus[i]!);
  return inv;
}
/** What discovery reports when nvidia-smi -q -x could not be read. */
function noSmi(message: string): Inventory {
  return { ...h100(), gpuSource: "unavailable", gpus: [], errors: [{ source: "nvidia-smi -q -x", message }] };
}

describe("driver", () => {
  it.each([
    ["real H100 capture", h100(), "ok", /^driver 580\.105\.08 \(CUDA 13\.0\): 8 GPUs via nvidia-smi$/],
    ["nvidia-smi missing", noSmi("nvidia-smi -q -x: not found (is it installed and on PATH?)"), "fail", /not found/],
    [
      "driver not answering",
      noSmi(
        "nvidia-smi -q -x: exited with status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
      ),
      "fail",
      /couldn't communicate/,
    ],
    ["answers with no GPU (crafted)", { ...h100(), gpus: [] }, "fail", /reports no GPU/],
    ["GPU discovery skipped", { ...h100(), gpuSource: "none" as const, gpus: [] }, "skip", /skipped/],
  ])("%s → %s", (_, inv, status, finding) => {
    const c = checkDriver(inv);
    expect(c).toMatchObject({ id: "driver", status, finding: expect.stringMatching(finding) });
    expect(c.fix === undefined).toBe(status !== "fail");
  });

  it("tells a missing nvidia-smi (install the driver) from a driver that does not answer (dmesg)", () => {
    expect(checkDriver(noSmi("nvidia-smi -q -x: not found (is it installed and on PATH?)")).fix).toMatch(
      /install the NVIDIA driver/,
    );
    expect(checkDriver(noSmi("nvidia-smi -q -x: exited with status 9")).fix).toMatch(/dmesg/);
  });
});

describe("nvml (optional)", () => {
  it.each([
    ["asked for and used", { ...h100(), gpuSource: "nvml" as const }, true, undefined, "ok"],
    [
      "asked for but failed",
      {
        ...h100(),
        errors: [{ source: "nvml", message: "Failed to load shared library; read the GPUs with nvidia-smi instead" }],
      },
      true,
      undefined,
      "warn",
    ],
    ["not asked for, loads", h100(), false, { ok: true as const, driverVersion: "580.105.08", gpus: 8 }, "ok"],
    ["not asked for, absent", h100(), false, { ok: false as const, error: "Failed to load shared library" }, "skip"],
  ])("%s → %s", (_, inv, wanted, probe, status) => {
    expect(checkNvml(inv, wanted, probe).status).toBe(status);
  });
});

describe("gpu-ecc", () => {
  it.each([
    ["real H100 capture", h100(), "ok", /no uncorrectable ECC error on 8 GPUs/],
    [
      "volatile errors on GPU 2 (crafted)",
      h100With(2, (g) => (g.health.eccUncorrectableVolatile = 3)),
      "fail",
      /^GPU 2: 3 uncorrectable ECC errors since the driver loaded$/,
    ],
    [
      "only lifetime errors (crafted)",
      h100With(5, (g) => (g.health.eccUncorrectableAggregate = 2)),
      "ok",
      /earlier in their lifetime: GPU 5 2/,
    ],
    [
      "cards without ECC (real RTX 4000 capture)",
      inventoryOf("smi-xml/rtx-4000-sff-ada-v13-telegraf.xml"),
      "ok",
      /ECC not reported/,
    ],
  ])("%s → %s", (_, inv, status, finding) => {
    expect(checkEcc(inv)).toMatchObject({ id: "gpu-ecc", status, finding: expect.stringMatching(finding) });
  });

  it("names the card to reset", () => {
    expect(checkEcc(h100With(2, (g) => (g.health.eccUncorrectableVolatile = 3))).fix).toMatch(/nvidia-smi -r -i 2/);
  });
});

describe("gpu-memory-repair", () => {
  it.each([
    ["real H100 capture", h100(), "ok", /no page retirement or row remapping pending/],
    [
      "page retirement pending (crafted)",
      h100With(1, (g) => (g.health.retiredPagesPending = true)),
      "fail",
      /^GPU 1: page retirement pending$/,
    ],
    [
      "row remapping pending (crafted)",
      h100With(7, (g) => (g.health.remappedRowsPending = true)),
      "fail",
      /^GPU 7: row remapping pending$/,
    ],
  ])("%s → %s", (_, inv, status, finding) => {
    expect(checkMemoryRepair(inv)).toMatchObject({
      id: "gpu-memory-repair",
      status,
      finding: expect.stringMatching(finding),
    });
  });
});

describe("gpu-temperature", () => {
  it.each([
    ["real H100 capture", h100(), "ok", /^hottest: GPU \d at 3\d °C$/],
    [
      "GPU 4 at 91 °C (crafted)",
      h100With(4, (g) => (g.health.temperatureC = 91)),
      "warn",
      /^GPU 4 at 91 °C, at or over its slowdown temperature \(87 °C\): not placed on while so hot$/,
    ],
    [
      "GPU 4 at 91 °C under its own 95 °C slowdown (crafted)",
      h100With(4, (g) => {
        g.health.temperatureC = 91;
        g.health.temperatureSlowdownC = 95;
      }),
      "ok",
      /^hottest: GPU 4 at 91 °C$/,
    ],
    [
      "no temperature reported (crafted)",
      { ...h100(), gpus: h100().gpus.map((g) => ({ ...g, health: { ...g.health, temperatureC: undefined } })) },
      "skip",
      /no card reports/,
    ],
  ])("%s → %s", (_, inv, status, finding) => {
    expect(checkTemperature(inv)).toMatchObject({
      id: "gpu-temperature",
      status,
      finding: expect.stringMatching(finding),
    });
  });
});

describe("gpu-processes", () => {
  const a10g = inventoryOf("smi-xml/a10g-v11-telegraf.xml");
  const pid = a10g.gpus[0]!.health.processes[0]!.pid;

  it.each([
    ["real H100 capture: idle", h100(), undefined, "ok"],
    ["real A10G capture: a process on the card", a10g, undefined, "warn"],
    ["the same process is one of llmgw's engines", a10g, new Set([pid]), "ok"],
  ])("%s → %s", (_, inv, own, status) => {
    expect(checkProcesses(inv, own).status).toBe(status);
  });

  it("names the process and the card", () => {
    expect(checkProcesses(a10g).finding).toMatch(new RegExp(`^GPU 0 used by .+ \\(pid ${pid}\\)$`));
  });
});

describe("mig", () => {
  it.each([
    ["real H100 capture: MIG disabled", h100(), "ok", /^no card in MIG mode$/],
    ["real GB200 capture: MIG disabled", inventoryOf(GB200_XML), "ok", /^no card in MIG mode$/],
    [
      "real A100 capture with 4 instances",
      inventoryOf(A100_MIG_XML, A100_MIG_L),
      "ok",
      /^MIG on GPU 0: 4 instances \(1g\.20gb × 4\)$/,
    ],
    [
      "MIG enabled, nothing carved (CRAFTED fixture)",
      inventoryOf("smi-xml/CRAFTED-a100-mig-enabled-no-instances.xml"),
      "warn",
      /GPU 0: MIG enabled but no instance carved/,
    ],
    [
      "mode change pending (CRAFTED fixture)",
      inventoryOf("smi-xml/CRAFTED-a100-mig-disable-pending.xml", A100_MIG_L),
      "warn",
      /GPU 0: MIG mode change pending \(Enabled → Disabled\)/,
    ],
  ])("%s → %s", (_, inv, status, finding) => {
    expect(checkMig(inv)).toMatchObject({ id: "mig", status, finding: expect.stringMatching(finding) });
  });

  it("says how to carve or how to apply the pending change", () => {
    expect(checkMig(inventoryOf("smi-xml/CRAFTED-a100-mig-enabled-no-instances.xml")).fix).toMatch(
      /nvidia-smi mig -i 0 -cgi .* -C.*-mig 0/,
    );
    expect(checkMig(inventoryOf("smi-xml/CRAFTED-a100-mig-disable-pending.xml")).fix).toMatch(/reset GPU 0/);
  });

  it("skips without GPUs", () => {
    expect(checkMig({ ...h100(), gpus: [] }).status).toBe("skip");
  });
});
