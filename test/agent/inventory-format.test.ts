import { describe, expect, it } from "vitest";
import { formatInventory, inventoryWarnings, ranges, table } from "../../agent/inventory.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { GB200_XML, H100_XML, inventoryFromCapture } from "../helpers/inventory.js";

const DOMAIN = "00000001-0000-0000-0000-000000000001.2";
const H100 = () => inventoryFromCapture(H100_XML);
/** The GB200 tray with IMEX ready and one channel: nothing to warn about. */
function gb200(): Inventory {
  const inv = inventoryFromCapture(GB200_XML);
  inv.imex = { state: "ready", domainState: "UP", channels: 1 };
  return inv;
}
/** The lines of the report's Warnings section, without their `  ! ` mark. */
function warningLines(report: string): string[] {
  const at = report.split("\n").indexOf("Warnings");
  if (at < 0) return [];
  return report
    .split("\n")
    .slice(at + 1)
    .filter((l) => l.startsWith("  ! "))
    .map((l) => l.slice(4));
}
/** The row of a table in the report whose first cell is `label`, split on runs of two or more spaces. */
function row(report: string, label: string): string[] | undefined {
  return report
    .split("\n")
    .map((l) => l.trim().split(/\s{2,}/))
    .find((cells) => cells[0] === label);
}

describe("table", () => {
  it("pads every column but the last to its widest cell", () => {
    expect(
      table([
        ["GPU", "CLASS", "HEALTH"],
        ["0", "h100-80g", "ok"],
        ["10", "a100-40g", "2 problem(s)"],
      ]),
    ).toEqual(["  GPU  CLASS     HEALTH", "  0    h100-80g  ok", "  10   a100-40g  2 problem(s)"]);
  });

  it("takes an indent and trims trailing space from short last cells", () => {
    expect(
      table(
        [
          ["A", "B", ""],
          ["long", "x", ""],
        ],
        "",
      ),
    ).toEqual(["A     B", "long  x"]);
  });
});

describe("ranges", () => {
  it.each([
    [[1, 2, 3, 5], "1-3, 5"],
    [[], ""],
    [[4], "4"],
    [[0, 1], "0-1"],
    [[0, 2, 4], "0, 2, 4"],
    [[0, 1, 2, 3, 4, 5, 6, 7], "0-7"],
    [[1, 3, 4, 5, 7, 8], "1, 3-5, 7-8"],
  ])("%j -> %j", (ns, want) => expect(ranges(ns)).toBe(want));
});

describe("inventoryWarnings", () => {
  it("has nothing to say about a healthy node", () => {
    expect(inventoryWarnings(H100())).toEqual([]);
    expect(inventoryWarnings(gb200())).toEqual([]);
  });

  it("names an HCA port stuck in INIT", () => {
    const inv = H100();
    inv.hcas.push({
      name: "mlx5_3",
      numaNode: 1,
      ports: [
        { port: 1, state: "ACTIVE" },
        { port: 2, state: "INIT", physState: "LinkUp", rateGbps: 400 },
      ],
    });
    expect(inventoryWarnings(inv)).toEqual(["mlx5_3 port 2 is INIT: no subnet manager answers on its fabric"]);
  });

  it("says a node without an HCA cannot host multi-node replicas", () => {
    const inv = H100();
    inv.hcas = [];
    inv.fabrics = [];
    expect(inventoryWarnings(inv)).toEqual([
      "no InfiniBand adapter: this node cannot host multi-node replicas outside an NVLink domain",
    ]);
  });

  it("repeats each GPU problem with its index", () => {
    const inv = H100();
    inv.gpus[5]!.health.problems.push("2 uncorrectable ECC errors since boot", "row remapping pending: reset the GPU");
    expect(inventoryWarnings(inv)).toEqual([
      "GPU 5: 2 uncorrectable ECC errors since boot",
      "GPU 5: row remapping pending: reset the GPU",
    ]);
  });

  it("warns when IMEX is down on a tray in an NVLink domain", () => {
    const inv = gb200();
    inv.imex = { state: "down", channels: 1 };
    expect(inventoryWarnings(inv)).toEqual(["IMEX is down: GPUs cannot share memory across nodes of the domain"]);
  });

  it("does not warn about IMEX on a node in no NVLink domain", () => {
    const inv = H100();
    inv.imex = { state: "down", channels: 0 };
    expect(inventoryWarnings(inv)).toEqual([]);
  });

  it("warns when IMEX is ready but has no channel", () => {
    const inv = gb200();
    inv.imex = { state: "ready", domainState: "UP", channels: 0 };
    expect(inventoryWarnings(inv)).toEqual([
      "IMEX has no channel (/dev/nvidia-caps-imex-channels is empty): create channel0",
    ]);
  });

  it("names the GPU that has not joined the NVLink domain and why", () => {
    const inv = gb200();
    inv.gpus[2]!.fabric = { ...inv.gpus[2]!.fabric!, state: "In Progress", status: "N/A" };
    const w = inventoryWarnings(inv);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatch(/^1 of 4 GPUs are not joined to the NVLink domain: /);
    expect(w[0]).toContain("GPU 2 fabric In Progress");
    expect(w[0]).not.toMatch(/GPU [013]/);
  });

  it("says so when GPUs report different NVLink domains", () => {
    const inv = gb200();
    inv.gpus[3]!.fabric = { ...inv.gpus[3]!.fabric!, clusterUuid: "00000002-0000-0000-0000-000000000002" };
    expect(inventoryWarnings(inv)).toEqual([
      `GPUs report different NVLink domains (${DOMAIN}, 00000002-0000-0000-0000-000000000002.2): this node is in no single domain`,
    ]);
  });

  it("lists GPUs with degraded NVLink bandwidth as ranges", () => {
    const inv = gb200();
    for (const i of [0, 1, 3]) inv.gpus[i]!.fabric!.health = { summary: "Limited Capacity", bandwidth: "Degraded" };
    expect(inventoryWarnings(inv)).toEqual(["GPU 0-1, 3: NVLink bandwidth degraded (health Limited Capacity)"]);
  });

  it("reports each source discovery could not read, first", () => {
    const inv = H100();
    inv.hcas[0]!.ports[0]!.state = "INIT";
    inv.errors = [
      { source: "nvidia-imex-ctl -N -j", message: "nvidia-imex-ctl -N -j: not found (is it installed and on PATH?)" },
      { source: "proc/meminfo", message: "ENOENT: no such file or directory" },
    ];
    expect(inventoryWarnings(inv)).toEqual([
      "could not read nvidia-imex-ctl -N -j: nvidia-imex-ctl -N -j: not found (is it installed and on PATH?)",
      "could not read proc/meminfo: ENOENT: no such file or directory",
      "mlx5_0 port 1 is INIT: no subnet manager answers on its fabric",
    ]);
  });
});

describe("formatInventory", () => {
  it("shows host, GPUs, fabric, adapters and engines of an HGX H100 with no warnings", () => {
    const report = formatInventory(H100());
    expect(report.endsWith("\n")).toBe(true);
    expect(report).toMatch(/^Host: ubuntu 24\.04 x86_64, \? CPUs, 2015 GiB memory, driver 580\.105\.08$/m);
    expect(report).toContain("GPUs (8, via nvidia-smi)");
    expect(row(report, "0")).toEqual([
      "0",
      "h100-80g",
      "NVIDIA H100 80GB HBM3",
      "81559 MiB",
      "-",
      "-",
      "-",
      "not in a multi-node NVLink domain (cluster UUID is zero)",
      "ok",
    ]);
    expect(row(report, "7")?.[1]).toBe("h100-80g");
    expect(report).toContain("placeable devices by class: h100-80g × 8");
    expect(report).toContain("no multi-node NVLink domain");
    expect(report).toContain("IMEX: absent, 0 channels");
    expect(report).toContain("InfiniBand adapters (1)");
    expect(row(report, "mlx5_0")).toEqual([
      "mlx5_0",
      "1",
      "ACTIVE",
      "400 Gb/s",
      "InfiniBand",
      "fe80:0000:0000:0000",
      "0",
    ]);
    expect(report).toContain("fabric ib-east: mlx5_0, 400 Gb/s");
    expect(report).toMatch(/^Engines: vllm 0\.29\.0, sglang absent, llamacpp absent$/m);
    expect(report).not.toContain("Warnings");
  });

  it("shows the GB200 tray's domain and IMEX state", () => {
    const report = formatInventory(gb200());
    expect(report).toContain(`domain ${DOMAIN}: 4 of 4 GPUs joined, health Healthy`);
    expect(report).toContain("IMEX: ready, domain UP, 1 channel\n");
    expect(row(report, "2")?.slice(1, 3)).toEqual(["gb200-185g", "NVIDIA GB200"]);
    expect(row(report, "2")?.at(-2)).toBe("joined");
  });

  it("lists its warnings at the end, each marked", () => {
    const inv = gb200();
    inv.imex = { state: "down", channels: 0 };
    inv.gpus[1]!.health.problems.push("XID 79: GPU has fallen off the bus");
    const report = formatInventory(inv);
    expect(warningLines(report)).toEqual([
      "GPU 1: XID 79: GPU has fallen off the bus",
      "IMEX is down: GPUs cannot share memory across nodes of the domain",
    ]);
    expect(row(report, "1")?.at(-1)).toBe("1 problem(s)");
    expect(row(report, "0")?.at(-1)).toBe("ok");
    expect(report).toContain("IMEX: down, 0 channels");
  });

  it("shows a GPU that has not joined and the count joined", () => {
    const inv = gb200();
    inv.gpus[2]!.fabric = { ...inv.gpus[2]!.fabric!, state: "In Progress", status: "N/A" };
    const report = formatInventory(inv);
    expect(report).toContain(`domain ${DOMAIN}: 3 of 4 GPUs joined`);
    expect(row(report, "2")?.at(-2)).toBe("fabric In Progress");
    expect(warningLines(report)).toHaveLength(1);
    expect(warningLines(report)[0]).toContain("GPU 2 fabric In Progress");
  });

  it("names both domains when cluster UUIDs are mixed", () => {
    const inv = gb200();
    inv.gpus[3]!.fabric = { ...inv.gpus[3]!.fabric!, clusterUuid: "00000002-0000-0000-0000-000000000002" };
    const report = formatInventory(inv);
    expect(report).toContain(`mixed domains: ${DOMAIN}, 00000002-0000-0000-0000-000000000002.2`);
    expect(report).not.toContain(`domain ${DOMAIN}:`);
  });

  it("says none for a node with no GPU and no adapter", () => {
    const inv = H100();
    inv.gpus = [];
    inv.gpuSource = "unavailable";
    inv.hcas = [];
    inv.fabrics = [{ fabric: "ib-east", hcas: [] }];
    inv.engines = { probed: [], versions: {} };
    inv.errors = [
      { source: "nvidia-smi -q -x", message: "nvidia-smi -q -x: not found (is it installed and on PATH?)" },
    ];
    const report = formatInventory(inv);
    expect(report).toContain("GPUs (0, via unavailable)\n  none\n");
    expect(report).toContain("placeable devices by class: none");
    expect(report).toContain("InfiniBand adapters (0)\n  none\n");
    expect(report).toContain("fabric ib-east: no HCA present");
    expect(report).not.toContain("Fabric identity comes from");
    expect(report).toContain("Engines: none probed");
    expect(warningLines(report)).toEqual([
      "could not read nvidia-smi -q -x: nvidia-smi -q -x: not found (is it installed and on PATH?)",
      "no InfiniBand adapter: this node cannot host multi-node replicas outside an NVLink domain",
    ]);
  });

  it("shows the OS as unknown and the CPU count when known", () => {
    const inv = H100();
    inv.host = { arch: "aarch64", cpuCount: 144, cpuFlags: [] };
    inv.memory = { totalMiB: 0 };
    expect(formatInventory(inv)).toMatch(/^Host: unknown OS aarch64, 144 CPUs, 0 GiB memory, driver not found$/m);
  });

  it("lists each MIG instance of a card in MIG mode under it, labelled <card>/mig<n>", () => {
    const inv = H100();
    inv.gpus[0]!.mig = {
      current: "Enabled",
      pending: "Enabled",
      instances: [
        {
          index: 0,
          uuid: "MIG-11111111-1111-5111-8111-111111111111",
          profile: "3g.40gb",
          memoryTotalMiB: 40192,
          processes: [],
        },
        {
          index: 1,
          uuid: "MIG-22222222-2222-5222-8222-222222222222",
          profile: "2g.20gb",
          memoryTotalMiB: 19968,
          processes: [],
        },
      ],
    };
    const report = formatInventory(inv);
    expect(row(report, "0")?.[2]).toBe("NVIDIA H100 80GB HBM3 [MIG, 2 instances]");
    expect(row(report, "0/mig0")).toEqual(["0/mig0", "h100-80g-mig-3g.40gb", "MIG instance", "40192 MiB"]);
    expect(row(report, "0/mig1")).toEqual(["0/mig1", "h100-80g-mig-2g.20gb", "MIG instance", "19968 MiB"]);
    expect(row(report, "1/mig0")).toBeUndefined();
    const lines = report.split("\n").map((l) => l.trim().split(/\s{2,}/)[0]);
    expect(lines.indexOf("0/mig0")).toBe(lines.indexOf("0") + 1);
    expect(lines.indexOf("0/mig1")).toBe(lines.indexOf("0") + 2);
    expect(report).toContain(
      "placeable devices by class: h100-80g-mig-3g.40gb × 1, h100-80g-mig-2g.20gb × 1, h100-80g × 7",
    );
  });

  it("groups NVLink peers by link count", () => {
    const inv = H100();
    inv.gpus[0]!.nvlinkPeers = [1, 2, 3, 5].map((gpu) => ({ gpu, links: 18 })).concat([{ gpu: 6, links: 4 }]);
    expect(formatInventory(inv)).toContain("NVLink GPU 0 ↔ 1-3, 5 (NV18), 6 (NV4)");
  });
});
