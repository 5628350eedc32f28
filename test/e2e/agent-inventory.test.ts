import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Inventory } from "../../shared/schemas/inventory.js";
import { tempDir } from "../helpers/db.js";
import { FIXTURES } from "../helpers/inventory.js";
import { ROOT, runLlmgw } from "../helpers/process.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const FAKE_SMI = join(ROOT, "agent", "sim", "fake-nvidia-smi");
const IB = join(FIXTURES, "ib-sysfs", "gpud-h100-sys-class-infiniband");
const HGX = {
  FAKE_SMI_XML: join(FIXTURES, "smi-xml", "hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml"),
  FAKE_SMI_L: join(FIXTURES, "smi-L", "CRAFTED-hgx-8x-h100-from-k8stestinfra-xml.txt"),
  FAKE_SMI_TOPO: join(FIXTURES, "topo", "hgx-h100-8x-nv18-8nic-legend-spaces-sglang30401.txt"),
};
const inventory = (args: string[], env: Record<string, string> = HGX) =>
  runLlmgw(["agent", "inventory", "--nvidia-smi", FAKE_SMI, "--ib-root", IB, ...args], { env });

describe("llmgw agent inventory", () => {
  it("shows GPUs, classes, NVLink peers, fabric, IMEX and IB adapters as a table", async () => {
    const r = await inventory([]);
    expect(r.code).toBe(0);
    expect(r.output).toContain("GPUs (8, via nvidia-smi)");
    expect(r.output).toMatch(/^ {2}0 +h100-80g +NVIDIA H100 80GB HBM3 +81559 MiB/m);
    expect(r.output).toContain("placeable devices by class: h100-80g × 8");
    expect(r.output).toContain("NVLink GPU 0 ↔ 1-7 (NV18)");
    expect(r.output).toContain("no multi-node NVLink domain");
    expect(r.output).toMatch(/^ {2}mlx5_0 +1 +ACTIVE +400 Gb\/s +InfiniBand/m);
    expect(r.output).toContain("Fabric identity comes from agent.yaml `fabrics`, not the GID prefix");
  });

  it("--json prints an inventory the shared schema accepts, with agent.yaml's fabrics", async () => {
    const cfg = join(tmp.dir, "agent.yaml");
    writeFileSync(
      cfg,
      "fabrics:\n  - name: ib-east\n    hcas: [mlx5_0, mlx5_1]\nclass_overrides:\n  NVIDIA H100 80GB HBM3: h100-sxm-80g\n",
    );
    const r = await inventory(["--json", "--config", cfg]);
    expect(r.code).toBe(0);
    const inv = Inventory.parse(JSON.parse(r.output));
    expect(inv.gpus).toHaveLength(8);
    expect(inv.gpus[3]).toMatchObject({
      class: "h100-sxm-80g",
      nearestNic: "mlx5_3",
      pciBusId: expect.stringMatching(/^00000000:/),
    });
    expect(inv.fabrics).toEqual([{ fabric: "ib-east", hcas: ["mlx5_0", "mlx5_1"], rateGbps: 400 }]);
    expect(inv.hcas.map((h) => h.name)).toContain("mlx5_bond_0");
  });

  it("keeps going without nvidia-smi: a clear warning, no stack trace, IB still shown", async () => {
    const r = await runLlmgw([
      "agent",
      "inventory",
      "--nvidia-smi",
      join(tmp.dir, "absent-nvidia-smi"),
      "--ib-root",
      IB,
    ]);
    expect(r.code).toBe(0);
    expect(r.output).toContain("GPUs (0, via unavailable)");
    expect(r.output).toMatch(/could not read nvidia-smi -q -x: .*absent-nvidia-smi -q -x: not found/);
    expect(r.output).toContain("InfiniBand adapters (9)");
    expect(r.output).not.toMatch(/\n\s+at /);
  });

  it("--no-gpu skips GPUs; no HCA is a warning", async () => {
    const r = await runLlmgw(["agent", "inventory", "--no-gpu", "--ib-root", join(tmp.dir, "no-ib")]);
    expect(r.output).toContain("GPUs (0, via none)");
    expect(r.output).toContain(
      "no InfiniBand adapter: this node cannot host multi-node replicas outside an NVLink domain",
    );
  });

  it("refuses an invalid agent.yaml, naming every bad key", async () => {
    const cfg = join(tmp.dir, "bad.yaml");
    writeFileSync(cfg, "fabrics:\n  - name: ib\nnvml: sometimes\ncolour: blue\n");
    const r = await inventory(["--config", cfg]);
    expect(r.code).toBe(2);
    expect(r.output).toContain("invalid configuration");
    expect(r.output).toContain("fabrics.0.hcas:");
    expect(r.output).toContain("nvml:");
    expect(r.output).toContain("colour: unknown key");
  });
});
