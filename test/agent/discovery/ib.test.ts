import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gidPrefix, parsePortState, parseRateGbps, parseSmLid, readInfiniband } from "../../../agent/discovery/ib.js";
import { Hca } from "../../../shared/schemas/hca.js";
import { DiscoveryError } from "../../../shared/schemas/inventory.js";
import { FIXTURES } from "../../helpers/inventory.js";

const GPUD_H100 = join(FIXTURES, "ib-sysfs", "gpud-h100-sys-class-infiniband");
const CRAFTED_SM_LID = join(FIXTURES, "ib-sysfs", "CRAFTED-sm-lid-sys-class-infiniband");

describe("parsePortState", () => {
  it.each([
    ["4: ACTIVE\n", "ACTIVE"],
    ["1: DOWN", "DOWN"],
    ["2: INIT\n", "INIT"],
    ["5: LinkUp", "LinkUp"],
    ["3: Disabled\n", "Disabled"],
    ["4: PortConfigurationTraining", "PortConfigurationTraining"],
    ["ACTIVE", "ACTIVE"],
  ])("%j -> %s", (s, want) => expect(parsePortState(s)).toBe(want));
});

describe("parseRateGbps", () => {
  it.each([
    ["400 Gb/sec (4X NDR)", 400],
    ["200 Gb/sec (2X NDR)\n", 200],
    ["100 Gb/sec (4X EDR)", 100],
    ["2.5 Gb/sec (1X SDR)", 2.5],
    ["", undefined],
    ["fast", undefined],
    ["400 Mb/sec", undefined],
  ])("%j -> %s", (s, want) => expect(parseRateGbps(s)).toBe(want));
});

describe("gidPrefix", () => {
  it.each([
    ["fe80:0000:0000:0000:bace:f6ff:fe2d:1707", "fe80:0000:0000:0000"],
    ["FE80:0000:0000:0000:BACE:F6FF:FE2D:1707\n", "fe80:0000:0000:0000"],
    ["0000:0000:0000:0000:0000:0000:0000:0000", undefined],
    ["fe80::bace:f6ff:fe2d:1707", undefined],
    ["fe80:0000:0000:0000:bace:f6ff:fe2d", undefined],
    ["", undefined],
  ])("%j -> %s", (s, want) => expect(gidPrefix(s)).toBe(want));
});

describe("parseSmLid", () => {
  it.each([
    ["0x1\n", 1],
    ["0x0\n", 0],
    ["0xFFFF", 0xffff],
    ["12", 12],
    ["0x10000", undefined],
    ["", undefined],
    ["none", undefined],
  ])("%j -> %s", (s, want) => expect(parseSmLid(s)).toBe(want));
});

describe("readInfiniband on the CRAFTED sm_lid tree (values of the gpud capture, sm_lid as the kernel writes it)", () => {
  it("reads each port's subnet manager LID: 0x1 on the ACTIVE port, 0 on the INIT one and on RoCE", async () => {
    const { hcas, errors } = await readInfiniband(CRAFTED_SM_LID);
    expect(errors).toEqual([]);
    expect(hcas.map((h) => [h.name, h.ports.map((p) => [p.port, p.state, p.linkLayer, p.smLid])])).toEqual([
      ["mlx5_0", [[1, "ACTIVE", "InfiniBand", 1]]],
      ["mlx5_1", [[1, "INIT", "InfiniBand", 0]]],
      ["mlx5_bond_0", [[1, "ACTIVE", "Ethernet", 0]]],
    ]);
    for (const h of hcas) expect(Hca.parse(h)).toEqual(h);
  });
});

describe("readInfiniband on the gpud H100 capture", () => {
  it("reports every adapter, in natural order, as valid wire HCAs", async () => {
    const { hcas, errors } = await readInfiniband(GPUD_H100);
    expect(errors).toEqual([]);
    const cx7 = (name: string): Hca => ({
      name,
      hcaType: "MT4129",
      fwVersion: "28.41.1000",
      boardId: "MT_0000000838",
      ports: [{ port: 1, state: "ACTIVE", physState: "LinkUp", rateGbps: 400, linkLayer: "InfiniBand" }],
    });
    expect(hcas).toEqual([
      ...["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"].map(cx7),
      {
        name: "mlx5_bond_0",
        hcaType: "MT41692",
        fwVersion: "32.38.3056",
        boardId: "MT_0000000884",
        ports: [{ port: 1, state: "ACTIVE", physState: "LinkUp", rateGbps: 200, linkLayer: "Ethernet" }],
      },
    ]);
    for (const h of hcas) expect(Hca.parse(h)).toEqual(h);
  });
});

describe("readInfiniband on built trees", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "llmgw-ib-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Writes sysfs-like files (with the trailing newline real sysfs has) under the temp root. */
  async function tree(files: Record<string, string>) {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
  }

  it("reads GID prefixes and NUMA nodes, keeps a port in INIT, omits missing files, orders mlx5_2 before mlx5_10", async () => {
    await tree({
      "mlx5_10/hca_type": "MT4129\n",
      "mlx5_10/device/numa_node": "-1\n",
      "mlx5_10/ports/1/state": "2: INIT\n",
      "mlx5_10/ports/1/phys_state": "5: LinkUp\n",
      "mlx5_10/ports/1/gids/0": "0000:0000:0000:0000:0000:0000:0000:0000\n",
      "mlx5_2/hca_type": "MT4129\n",
      "mlx5_2/fw_ver": "28.39.1002\n",
      "mlx5_2/board_id": "MT_0000000838\n",
      "mlx5_2/device/numa_node": "1\n",
      "mlx5_2/ports/10/state": "1: DOWN\n",
      "mlx5_2/ports/10/phys_state": "3: Disabled\n",
      "mlx5_2/ports/2/state": "4: ACTIVE\n",
      "mlx5_2/ports/2/phys_state": "5: LinkUp\n",
      "mlx5_2/ports/2/rate": "400 Gb/sec (4X NDR)\n",
      "mlx5_2/ports/2/link_layer": "InfiniBand\n",
      "mlx5_2/ports/2/gids/0": "fe80:0000:0000:0000:bace:f6ff:fe2d:1707\n",
      "mlx5_2/ports/3/counters/port_rcv_data": "0\n",
    });
    const { hcas, errors } = await readInfiniband(root);
    expect(errors).toEqual([]);
    expect(hcas).toEqual([
      {
        name: "mlx5_2",
        hcaType: "MT4129",
        fwVersion: "28.39.1002",
        boardId: "MT_0000000838",
        numaNode: 1,
        ports: [
          {
            port: 2,
            state: "ACTIVE",
            physState: "LinkUp",
            rateGbps: 400,
            linkLayer: "InfiniBand",
            gidPrefix: "fe80:0000:0000:0000",
          },
          { port: 10, state: "DOWN", physState: "Disabled" },
        ],
      },
      { name: "mlx5_10", hcaType: "MT4129", numaNode: null, ports: [{ port: 1, state: "INIT", physState: "LinkUp" }] },
    ]);
    for (const h of hcas) expect(Hca.parse(h)).toEqual(h);
  });

  it("reads a missing root as no InfiniBand", async () => {
    expect(await readInfiniband(join(root, "absent"))).toEqual({ hcas: [], errors: [] });
  });

  it("reports a root it cannot list, and nothing else", async () => {
    await tree({ "not-a-dir": "x\n" });
    const { hcas, errors } = await readInfiniband(join(root, "not-a-dir"));
    expect(hcas).toEqual([]);
    expect(errors).toEqual([
      { source: "/sys/class/infiniband", message: `${join(root, "not-a-dir")}: not a directory` },
    ]);
  });

  // Tests run as root, where chmod 000 does not stop reads; a file where a directory belongs fails for every user.
  it("reports an adapter it cannot read and still reports the others", async () => {
    await tree({
      "mlx5_0/hca_type": "MT4129\n",
      "mlx5_0/ports/1/state": "4: ACTIVE\n",
      "mlx5_1/hca_type": "MT4129\n",
      "mlx5_1/ports": "not a directory\n",
      mlx5_2: "a file, not an adapter\n",
    });
    const { hcas, errors } = await readInfiniband(root);
    expect(hcas).toEqual([{ name: "mlx5_0", hcaType: "MT4129", ports: [{ port: 1, state: "ACTIVE" }] }]);
    expect(errors).toEqual([
      { source: "/sys/class/infiniband/mlx5_1", message: `${join(root, "mlx5_1", "ports")}: not a directory` },
      { source: "/sys/class/infiniband/mlx5_2", message: expect.stringMatching(/mlx5_2\/[a-z_/]+: not a directory$/) },
    ]);
    for (const e of errors) expect(DiscoveryError.parse(e)).toEqual(e);
  });
});
