// The InfiniBand checks: ports, the fabrics of agent.yaml (with the subnet manager read from sm_lid, on the CRAFTED
// sysfs tree through discovery), and GPUDirect RDMA.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readInfiniband } from "../../../agent/discovery/ib.js";
import { checkGpudirectRdma, checkIbFabrics, checkIbPorts, kernelAtLeast } from "../../../agent/doctor/ib-checks.js";
import type { GpuDirectFacts } from "../../../agent/doctor/input.js";
import type { Inventory } from "../../../shared/schemas/inventory.js";
import { FIXTURES } from "../../helpers/inventory.js";
import { H100_XML, inventoryOf } from "./inputs.js";

const h100 = () => inventoryOf(H100_XML);
const IB_EAST = [{ name: "ib-east", hcas: ["mlx5_0"] }];

/** A copy of `inv` with `edit` applied (crafted from a real capture). */
function edited(inv: Inventory, edit: (inv: Inventory) => void): Inventory {
  edit(inv);
  return inv;
}

describe("ib-ports", () => {
  const withPort = (state: string, physState: string, hca = "mlx5_0") =>
    edited(h100(), (inv) =>
      inv.hcas.push({ name: hca, ports: [{ port: 1, state, physState, linkLayer: "InfiniBand" }] }),
    );
  const only = (state: string, physState: string, hca: string) =>
    edited(
      h100(),
      (inv) => (inv.hcas = [{ name: hca, ports: [{ port: 1, state, physState, linkLayer: "InfiniBand" }] }]),
    );
  it.each([
    ["one ACTIVE port", h100(), IB_EAST, "ok", /^1 port ACTIVE on 1 adapter$/],
    [
      "INIT on an HCA of a fabric",
      only("INIT", "LinkUp", "mlx5_0"),
      IB_EAST,
      "fail",
      /^mlx5_0 port 1 INIT: no subnet manager answers \(phys LinkUp\)$/,
    ],
    [
      "INIT on an HCA in no fabric",
      withPort("INIT", "LinkUp", "mlx5_3"),
      IB_EAST,
      "warn",
      /mlx5_3 port 1 INIT: no subnet manager answers \(phys LinkUp\) \[in no agent.yaml fabric\]/,
    ],
    [
      "DOWN on an HCA of a fabric",
      only("DOWN", "Polling", "mlx5_0"),
      IB_EAST,
      "fail",
      /mlx5_0 port 1 DOWN: link down \(phys Polling\)/,
    ],
    ["DOWN with no fabric configured", only("DOWN", "Disabled", "mlx5_0"), [], "warn", /DOWN: link down/],
    [
      "ACTIVE, but sm_lid 0 on InfiniBand",
      edited(h100(), (inv) => (inv.hcas[0]!.ports[0]!.smLid = 0)),
      IB_EAST,
      "fail",
      /^mlx5_0 port 1 ACTIVE but sm_lid 0: no subnet manager answers \(phys LinkUp\)$/,
    ],
    [
      "RoCE reads sm_lid 0 and needs no subnet manager",
      edited(h100(), (inv) => (inv.hcas[0]!.ports[0] = { port: 1, state: "ACTIVE", linkLayer: "Ethernet", smLid: 0 })),
      IB_EAST,
      "ok",
      /^1 port ACTIVE on 1 adapter$/,
    ],
    [
      "no adapter at all",
      edited(h100(), (inv) => (inv.hcas = [])),
      [],
      "warn",
      /^no InfiniBand adapter: this node cannot host multi-node replicas outside an NVLink domain$/,
    ],
  ])("%s → %s", (_, inv, fabrics, status, finding) => {
    expect(checkIbPorts(inv, fabrics)).toMatchObject({
      id: "ib-ports",
      status,
      finding: expect.stringMatching(finding),
    });
  });

  it("an INIT port says to start a subnet manager", () => {
    expect(checkIbPorts(only("INIT", "LinkUp", "mlx5_0"), IB_EAST).fix).toMatch(/start opensm\/UFM/);
  });
});

describe("ib-fabrics", () => {
  const ethernetOnly = edited(
    h100(),
    (inv) => (inv.hcas = [{ name: "mlx5_bond_0", ports: [{ port: 1, state: "ACTIVE", linkLayer: "Ethernet" }] }]),
  );
  it.each([
    ["agent.yaml names mlx5_0, which exists", h100(), IB_EAST, "ok", /^ib-east: mlx5_0 port 1 ACTIVE$/],
    [
      "agent.yaml names mlx5_9, which does not",
      h100(),
      [{ name: "ib-east", hcas: ["mlx5_0", "mlx5_9"] }],
      "fail",
      /^fabric ib-east names mlx5_9, which this node does not have \(it has mlx5_0\)$/,
    ],
    ["no fabric named, InfiniBand present", h100(), [], "warn", /agent.yaml names no fabric: mlx5_0 are not used/],
    ["no fabric named, Ethernet only", ethernetOnly, [], "skip", /no InfiniBand adapter/],
  ])("%s → %s", (_, inv, fabrics, status, finding) => {
    expect(checkIbFabrics(inv, fabrics)).toMatchObject({
      id: "ib-fabrics",
      status,
      finding: expect.stringMatching(finding),
    });
  });
});

describe("ib-fabrics: each named HCA has an ACTIVE port a subnet manager answered (CRAFTED sm_lid tree)", () => {
  const crafted = async () => {
    const { hcas } = await readInfiniband(join(FIXTURES, "ib-sysfs", "CRAFTED-sm-lid-sys-class-infiniband"));
    return edited(h100(), (inv) => (inv.hcas = hcas));
  };
  it.each([
    ["mlx5_0: ACTIVE, SM at LID 0x1", ["mlx5_0"], "ok", /^ib-east: mlx5_0 port 1 ACTIVE, subnet manager at LID 0x1$/],
    [
      "mlx5_1: INIT, sm_lid 0x0",
      ["mlx5_0", "mlx5_1"],
      "fail",
      /^fabric ib-east: mlx5_1 port 1 INIT: no subnet manager answers \(phys LinkUp\)$/,
    ],
    ["mlx5_bond_0: RoCE, sm_lid 0x0", ["mlx5_bond_0"], "ok", /^ib-east: mlx5_bond_0 port 1 ACTIVE \(RoCE\)$/],
  ])("%s → %s", async (_, hcas, status, finding) => {
    const c = checkIbFabrics(await crafted(), [{ name: "ib-east", hcas }]);
    expect(c).toMatchObject({ id: "ib-fabrics", status, finding: expect.stringMatching(finding) });
    if (status === "fail") {
      expect(c.fix).toMatch(/start opensm\/UFM on that fabric/);
      expect(c.fix).toMatch(/subnet manager of its managed switch/);
    }
  });

  it("names every fabric and each problem: a missing HCA and a port with no subnet manager", async () => {
    const c = checkIbFabrics(await crafted(), [
      { name: "ib-east", hcas: ["mlx5_0", "mlx5_7"] },
      { name: "ib-west", hcas: ["mlx5_1"] },
    ]);
    expect(c.status).toBe("fail");
    expect(c.finding).toBe(
      "fabric ib-east names mlx5_7, which this node does not have (it has mlx5_0, mlx5_1, mlx5_bond_0); " +
        "fabric ib-west: mlx5_1 port 1 INIT: no subnet manager answers (phys LinkUp)",
    );
    expect(c.fix).toMatch(/^correct `fabrics` in agent.yaml .*; start opensm/);
  });

  it("an ACTIVE port is enough; an HCA with only a DOWN port fails with the link's fix", () => {
    const twoPorts = edited(h100(), (inv) =>
      inv.hcas[0]!.ports.push({ port: 2, state: "DOWN", physState: "Polling", linkLayer: "InfiniBand" }),
    );
    expect(checkIbFabrics(twoPorts, IB_EAST).status).toBe("ok");
    const down = edited(twoPorts, (inv) => inv.hcas[0]!.ports.shift());
    expect(checkIbFabrics(down, IB_EAST)).toMatchObject({
      status: "fail",
      finding: "fabric ib-east: mlx5_0 port 2 DOWN: link down (phys Polling)",
      fix: expect.stringMatching(/check the cable/),
    });
  });
});

describe("gpudirect-rdma", () => {
  const gdr = (more: Partial<GpuDirectFacts> = {}): GpuDirectFacts => ({ peermem: false, nvPeerMem: false, ...more });
  const OPEN = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build";
  const PROPRIETARY = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 10:11:16 UTC 2025";
  it.each([
    ["nvidia_peermem loaded", h100(), IB_EAST, gdr({ peermem: true }), "ok", /^nvidia_peermem loaded: /],
    ["nv_peer_mem (legacy) loaded", h100(), IB_EAST, gdr({ nvPeerMem: true }), "ok", /^nv_peer_mem loaded/],
    [
      "open kernel module on Linux 6.8",
      h100(),
      IB_EAST,
      gdr({ driverVersion: OPEN, kernel: "6.8.0-45-generic" }),
      "ok",
      /^dma-buf: open kernel module on Linux 6\.8\.0-45-generic$/,
    ],
    [
      "open kernel module on Linux 5.4",
      h100(),
      IB_EAST,
      gdr({ driverVersion: OPEN, kernel: "5.4.0-150-generic" }),
      "warn",
      /\(Linux 5\.4\.0-150-generic is older than 5\.12\): NCCL will move data through host memory/,
    ],
    [
      "proprietary module, no peermem",
      h100(),
      IB_EAST,
      gdr({ driverVersion: PROPRIETARY, kernel: "6.8.0-45-generic" }),
      "warn",
      /^no nvidia_peermem module and no dma-buf \(the proprietary kernel module has no dma-buf\): NCCL will move data through host memory \(InfiniBand without GPUDirect RDMA\)/,
    ],
    ["no InfiniBand fabric in agent.yaml", h100(), [], gdr(), "skip", /names no InfiniBand fabric/],
    ["no GPU read", { ...h100(), gpus: [] }, IB_EAST, gdr(), "skip", /^no GPU was read/],
  ])("%s → %s", (_, inv, fabrics, facts, status, finding) => {
    const c = checkGpudirectRdma(inv, fabrics, facts);
    expect(c).toMatchObject({ id: "gpudirect-rdma", status, finding: expect.stringMatching(finding) });
    if (status === "warn") expect(c.fix).toMatch(/^`modprobe nvidia_peermem`.* open kernel module on Linux 5\.12/);
  });

  it.each([
    ["5.12.0", true],
    ["5.11.22-100.fc32.x86_64", false],
    ["6.1.0-rpi7-rpi-v8", true],
    ["4.18.0-553.el8_10.x86_64", false],
    ["", undefined],
  ])("kernelAtLeast(%j, 5, 12) → %s", (release, want) => expect(kernelAtLeast(release, 5, 12)).toBe(want));
});
