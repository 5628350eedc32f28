import { describe, expect, it } from "vitest";
import { checkImex, checkImexChannel, checkImexPeers, checkNvlinkFabric } from "../../../agent/doctor/fabric-checks.js";
import type { Inventory } from "../../../shared/schemas/inventory.js";
import { DOMAIN, gb200, H100_XML, inventoryOf, serverOk } from "./inputs.js";

const h100 = () => inventoryOf(H100_XML);
const CHANNELS = "/dev/nvidia-caps-imex-channels";

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

describe("imex-peers (nodes_config.cfg against the control plane's view, in a multi-node domain only)", () => {
  const PATH = "/etc/nvidia-imex/nodes_config.cfg";
  const file = (...addresses: string[]) => ({ path: PATH, kind: "read" as const, addresses });
  const peers = (domain: string | null, ...addresses: string[]) => serverOk({ peers: { ok: true, domain, addresses } });
  it.each([
    ["single machine", h100(), file("10.0.0.1"), undefined, "skip", /^not needed: .*no multi-node NVLink domain$/],
    [
      "no file, IMEX not installed",
      edited(gb200(), (i) => (i.imex = { state: "absent", channels: 0 })),
      { path: PATH, kind: "absent" as const },
      undefined,
      "skip",
      /^no \/etc\/nvidia-imex\/nodes_config\.cfg, and IMEX is not installed/,
    ],
    [
      "no file while IMEX runs",
      gb200(),
      { path: PATH, kind: "absent" as const },
      undefined,
      "warn",
      /^IMEX is ready but \/etc\/nvidia-imex\/nodes_config\.cfg does not exist$/,
    ],
    [
      "an unreadable file",
      gb200(),
      { path: PATH, kind: "unreadable" as const, error: "EACCES" },
      undefined,
      "warn",
      /^cannot read .*: EACCES$/,
    ],
    ["an empty file", gb200(), file(), undefined, "warn", /lists no address$/],
    [
      "no control plane: the count only",
      gb200(),
      file("10.0.0.1", "10.0.0.2"),
      undefined,
      "ok",
      /^\/etc\/nvidia-imex\/nodes_config\.cfg lists 2 addresses \(no control plane configured to compare with\)$/,
    ],
    [
      "the same peers as the control plane",
      gb200(),
      file("10.0.0.1", "10.0.0.2"),
      peers(DOMAIN, "10.0.0.1", "10.0.0.2"),
      "ok",
      new RegExp(`^/etc/nvidia-imex/nodes_config\\.cfg lists the 2 peers the control plane sees in domain ${DOMAIN}$`),
    ],
    [
      "a peer missing and one too many",
      gb200(),
      file("10.0.0.1", "10.0.0.9"),
      peers(DOMAIN, "10.0.0.1", "10.0.0.2"),
      "warn",
      /differs from the 2 nodes the control plane sees in domain .*: missing 10\.0\.0\.2; lists 10\.0\.0\.9, which the control plane sees in no node of the domain$/,
    ],
    [
      "a control plane without the endpoint",
      gb200(),
      file("10.0.0.1"),
      serverOk({ peers: { ok: false, error: "GET /api/v1/agents/gpu-01/nvlink-peers: HTTP 404" } }),
      "ok",
      /lists 1 address \(not compared: GET .*HTTP 404\)$/,
    ],
    [
      "the control plane sees the node in no domain",
      gb200(),
      file("10.0.0.1"),
      peers(null),
      "ok",
      /\(not compared: the control plane sees this node in no NVLink domain\)$/,
    ],
    [
      "the node token refused",
      gb200(),
      file("10.0.0.1"),
      serverOk({ token: { kind: "refused", nodeId: "gpu-01", status: 401, message: "HTTP 401" } }),
      "ok",
      /\(not compared: the node token was not accepted\)$/,
    ],
  ])("%s → %s", (_, inv, f, server, status, finding) => {
    const c = checkImexPeers(inv, f, server);
    expect(c).toMatchObject({ id: "imex-peers", status, finding: expect.stringMatching(finding) });
    if (status === "warn") expect(c.fix).toMatch(/nodes_config\.cfg|agent's user/);
  });

  it("a difference says how to fix the file and when a difference is meant", () => {
    const c = checkImexPeers(gb200(), file("10.0.0.1"), peers(DOMAIN, "10.0.0.1", "10.0.0.2"));
    expect(c.fix).toMatch(/systemctl restart nvidia-imex/);
    expect(c.fix).toMatch(/per NVLink partition or per job/);
  });
});
