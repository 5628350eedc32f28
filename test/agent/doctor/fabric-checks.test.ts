import { describe, expect, it } from "vitest";
import {
  checkIbFabrics,
  checkIbPorts,
  checkImex,
  checkImexChannel,
  checkNvlinkFabric,
} from "../../../agent/doctor/fabric-checks.js";
import type { Inventory } from "../../../shared/schemas/inventory.js";
import { DOMAIN, gb200, H100_XML, inventoryOf } from "./inputs.js";

const h100 = () => inventoryOf(H100_XML);
const CHANNELS = "/dev/nvidia-caps-imex-channels";
const IB_EAST = [{ name: "ib-east", hcas: ["mlx5_0"] }];

/** A copy of `inv` with `edit` applied (crafted from a real capture). */
function edited(inv: Inventory, edit: (inv: Inventory) => void): Inventory {
  edit(inv);
  return inv;
}

describe("nvlink-fabric", () => {
  it.each([
    [
      "real H100 HGX: zero cluster UUID",
      h100(),
      "ok",
      /^single-machine NVSwitch \(cluster UUID zero\) on 8 of 8 GPUs: not a multi-node domain$/,
    ],
    [
      "real GB200 tray joined",
      gb200(),
      "ok",
      new RegExp(`^domain ${DOMAIN.replace(/\./g, "\\.")}: all 4 GPUs joined, health Healthy$`),
    ],
    [
      "real GB300 tray, clique 32766",
      gb200("smi-xml/gb300-4gpu-nvl-fabric-clique32766-580.173.02-k8stestinfra.xml"),
      "ok",
      /\.32766: all 4 GPUs joined/,
    ],
    [
      "real L40S: no fabric",
      inventoryOf("smi-xml/l40s-1gpu-595.91.07-k8stestinfra.xml"),
      "ok",
      /^no NVLink fabric reported .*not a multi-node domain$/,
    ],
    [
      "GPU 2 Limited Capacity / Degraded (CRAFTED fixture)",
      gb200("smi-xml/CRAFTED-gb200-gpu2-limited-capacity.xml"),
      "warn",
      /: 4 of 4 GPUs joined, GPU 2 bandwidth Degraded, health Limited Capacity$/,
    ],
    [
      "fabric manager restart: In Progress (CRAFTED fixture)",
      gb200("smi-xml/CRAFTED-gb200-tray-fabric-in-progress.xml"),
      "fail",
      /: 0 of 4 GPUs joined; GPU 0-3 fabric In Progress$/,
    ],
    [
      "GPU 3 in another cluster (CRAFTED fixture)",
      gb200("smi-xml/CRAFTED-gb200-gpu3-mixed-cluster-uuid.xml"),
      "fail",
      /^mixed domains: .*GPUs report different NVLink domains/,
    ],
    [
      "GPU 1 Unhealthy (MOCK-NVML capture)",
      gb200("smi-xml/MOCK-gb200-2gpu-fabric-route-unhealthy-580.65.06-k8stestinfra.xml"),
      "fail",
      /GPU 1 fabric health Unhealthy/,
    ],
    [
      "single machine, status Insufficient Resources (crafted after the azhpc506 fragment)",
      edited(
        h100(),
        (inv) =>
          (inv.gpus[0]!.fabric = {
            state: "Completed",
            status: "Insufficient Resources",
            cliqueId: "0",
            clusterUuid: "00000000-0000-0000-0000-000000000000",
          }),
      ),
      "fail",
      /^GPU 0 fabric status Insufficient Resources$/,
    ],
    [
      "single machine, bandwidth Degraded (crafted from the real B200 capture)",
      edited(
        inventoryOf("smi-xml/hgx-8x-b200-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml"),
        (inv) => (inv.gpus[3]!.fabric!.health = { summary: "Limited Capacity", bandwidth: "Degraded" }),
      ),
      "warn",
      /^single-machine NVSwitch: GPU 3 bandwidth Degraded, health Limited Capacity$/,
    ],
    ["no GPU read", { ...h100(), gpus: [] }, "skip", /no GPU/],
  ])("%s → %s", (_, inv, status, finding) => {
    const c = checkNvlinkFabric(inv);
    expect(c).toMatchObject({ id: "nvlink-fabric", status, finding: expect.stringMatching(finding) });
    if (status === "fail") expect(c.fix).toMatch(/nvidia-fabricmanager/);
  });

  it("judges the cards only: IMEX down does not fail the fabric check", () => {
    expect(checkNvlinkFabric(edited(gb200(), (inv) => (inv.imex = { state: "down", channels: 0 }))).status).toBe("ok");
  });
});

describe("imex (required in a multi-node domain only)", () => {
  const withImex = (imex: Inventory["imex"], inv = gb200()) => edited(inv, (i) => (i.imex = imex));
  it.each([
    ["single machine, IMEX absent", h100(), "skip", /^not needed: .*\(IMEX absent\)$/],
    ["single machine, IMEX down", withImex({ state: "down", channels: 0 }, h100()), "skip", /not needed/],
    ["GB200 tray, READY / UP", gb200(), "ok", /^IMEX ready, domain UP$/],
    [
      "GB200 tray, daemon down",
      withImex({ state: "down", channels: 1 }),
      "fail",
      /^IMEX down: the domain's GPUs cannot share memory across nodes$/,
    ],
    ["GB200 tray, IMEX not installed", withImex({ state: "absent", channels: 0 }), "fail", /IMEX absent/],
    [
      "GB200 tray, domain DEGRADED",
      withImex({ state: "degraded", domainState: "DEGRADED", channels: 1 }),
      "fail",
      /IMEX degraded, domain DEGRADED/,
    ],
    ["GB200 tray, answer not understood", withImex({ state: "unknown", channels: 1 }), "fail", /IMEX unknown/],
  ])("%s → %s", (_, inv, status, finding) => {
    const c = checkImex(inv);
    expect(c).toMatchObject({ id: "imex", status, finding: expect.stringMatching(finding) });
    if (status === "fail") expect(c.fix).toBeTruthy();
  });

  it.each([
    ["single machine, no channel", h100(), "skip"],
    ["GB200 tray, channel0", gb200(), "ok"],
    ["GB200 tray, no channel", withImex({ state: "ready", domainState: "UP", channels: 0 }), "fail"],
  ])("channel: %s → %s", (_, inv, status) => {
    const c = checkImexChannel(inv, CHANNELS);
    expect(c.status).toBe(status);
    if (status === "fail") expect(c.fix).toMatch(/NVreg_CreateImexChannel0=1/);
  });
});

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
    ["agent.yaml names mlx5_0, which exists", h100(), IB_EAST, "ok", /^ib-east: mlx5_0$/],
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
