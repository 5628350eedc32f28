import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deviceLabel, deviceNumber, devicesOf, gpuClass, labelOfDeviceNumber, migClass } from "../../shared/classes.js";
import type { Gpu } from "../../shared/schemas/gpu.js";
import { FIXTURES, fixture } from "../helpers/inventory.js";

/**
 * Every (name, MiB) pair in the real captures: XML product_name + the card's fb total, and `nvidia-smi -q` text (MIG
 * instance blocks skipped).
 */
function fixtureGpus(): { file: string; name: string; mib: number }[] {
  const out: { file: string; name: string; mib: number }[] = [];
  for (const f of readdirSync(join(FIXTURES, "smi-xml"))) {
    const xml = fixture(`smi-xml/${f}`);
    for (const block of xml
      .replace(/<mig_devices>[\s\S]*?<\/mig_devices>/g, "")
      .split("<gpu id=")
      .slice(1)) {
      const name = /<product_name>([^<]+)<\/product_name>/.exec(block)![1]!;
      const mib = Number(/<fb_memory_usage>\s*<total>(\d+) MiB/.exec(block)![1]);
      out.push({ file: f, name, mib });
    }
  }
  for (const f of readdirSync(join(FIXTURES, "smi-text"))) {
    const txt = fixture(`smi-text/${f}`);
    for (const block of txt.split(/\nGPU [0-9A-F]{8}:/).slice(1)) {
      const name = /Product Name\s+:\s+(.+)/.exec(block)?.[1]?.trim();
      const mib = /\n {4}FB Memory Usage\s+Total\s+:\s+(\d+) MiB/.exec(block)?.[1];
      if (name && mib) out.push({ file: f, name, mib: Number(mib) });
    }
  }
  return out;
}

const EXPECTED: Record<string, string> = {
  "NVIDIA H100 80GB HBM3/81559": "h100-80g",
  "NVIDIA H200/143771": "h200-140g",
  "NVIDIA GB200/189471": "gb200-185g",
  "NVIDIA GB200/196608": "gb200-192g",
  "NVIDIA GB300/284208": "gb300-278g",
  "NVIDIA B200/183359": "b200-179g",
  "NVIDIA A100-SXM4-40GB/40960": "a100-40g",
  "NVIDIA A100-SXM4-80GB/81920": "a100-80g",
  "NVIDIA A10G/23028": "a10g-22g",
  "NVIDIA L40S/46068": "l40s-45g",
  "Tesla T4/15360": "t4-15g",
  "Quadro P400/1998": "p400-2g",
  "NVIDIA RTX A5000/24564": "rtx-a5000-24g",
  "NVIDIA RTX 4000 SFF Ada Generation/20475": "rtx-4000-sff-ada-generation-20g",
  "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition/97887":
    "rtx-pro-6000-blackwell-max-q-workstation-edition-96g",
  "NVIDIA GeForce RTX 4090/24564": "rtx-4090-24g",
  "NVIDIA TITAN V/12288": "titan-v-12g",
};

describe("gpuClass", () => {
  const seen = fixtureGpus();

  it("names every GPU in the real captures as the design's rule says", () => {
    expect(seen.length).toBeGreaterThan(40);
    const got = Object.fromEntries(seen.map((g) => [`${g.name}/${g.mib}`, gpuClass(g.name, g.mib)]));
    expect(got).toEqual(EXPECTED);
  });

  it("covers every name nvidia-smi -L prints in the captures", () => {
    const names = new Set(seen.map((g) => g.name));
    for (const f of readdirSync(join(FIXTURES, "smi-L"))) {
      for (const m of fixture(`smi-L/${f}`).matchAll(/^GPU \d+: (.+) \(UUID/gm)) expect(names).toContain(m[1]);
    }
  });

  it.each([
    ["NVIDIA H100 PCIe", 81559, "h100-80g"],
    ["NVIDIA H100 NVL", 95830, "h100-94g"],
    ["NVIDIA A100-PCIE-40GB", 40960, "a100-40g"],
    ["NVIDIA H100 SXM5 80GB", 81559, "h100-80g"],
    ["", 1024, "gpu-1g"],
  ])("%s (%i MiB) → %s", (name, mib, cls) => expect(gpuClass(name, mib)).toBe(cls));
});

describe("MIG classes and device labels", () => {
  it.each([
    ["a100-80g", "3g.40gb", "a100-80g-mig-3g.40gb"],
    ["h200-140g", "1c.3g.71gb", "h200-140g-mig-1c.3g.71gb"],
    ["h100-80g", "1g.10gb", "h100-80g-mig-1g.10gb"],
  ])("%s + %s → %s", (card, profile, cls) => expect(migClass(card, profile)).toBe(cls));

  it("labels GPUs `3` and MIG instances `3/mig1`, numbered 1000 + 100 × card + instance", () => {
    expect(deviceLabel(3)).toBe("3");
    expect(deviceLabel(3, 1)).toBe("3/mig1");
    expect(deviceNumber(3)).toBe(3);
    expect(deviceNumber(3, 1)).toBe(1301);
    expect(deviceNumber(0, 0)).toBe(1000);
    expect([3, 1301, 1000, 1706].map(labelOfDeviceNumber)).toEqual(["3", "3/mig1", "0/mig0", "7/mig6"]);
  });
});

describe("devicesOf", () => {
  const base = (index: number, mig?: Gpu["mig"]): Gpu => ({
    index,
    uuid: `GPU-${index}`,
    name: "NVIDIA A100-SXM4-80GB",
    class: "a100-80g",
    memoryTotalMiB: 81920,
    nvlinkPeers: [],
    nics: [],
    health: { processes: [], problems: [] },
    ...(mig ? { mig } : {}),
  });
  const inst = (index: number, profile: string) => ({
    index,
    uuid: `MIG-${index}`,
    profile,
    memoryTotalMiB: 40000,
    processes: [],
  });

  it("hands out whole cards, and each instance of a card in MIG mode instead of the card", () => {
    const devs = devicesOf([
      base(0),
      base(1, { current: "Enabled", pending: "Enabled", instances: [inst(0, "3g.40gb"), inst(1, "1g.10gb")] }),
      base(2, { current: "Disabled", pending: "Disabled", instances: [] }),
    ]);
    expect(devs.map((d) => [d.id, d.label, d.class])).toEqual([
      [0, "0", "a100-80g"],
      [1100, "1/mig0", "a100-80g-mig-3g.40gb"],
      [1101, "1/mig1", "a100-80g-mig-1g.10gb"],
      [2, "2", "a100-80g"],
    ]);
  });

  it("never places a MIG card with nothing carved or a pending mode change", () => {
    expect(devicesOf([base(0, { current: "Enabled", pending: "Enabled", instances: [] })])).toEqual([]);
    expect(devicesOf([base(0, { current: "Disabled", pending: "Enabled", instances: [] })])).toEqual([]);
    expect(devicesOf([base(0, { current: "Enabled", pending: "Disabled", instances: [inst(0, "7g.80gb")] })])).toEqual(
      [],
    );
  });
});
