import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseTopo } from "../../../agent/discovery/topo.js";

const read = (name: string) => readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "topo", name), "utf8");

// NVLink peers of GPU `self` on a box where all `n` GPUs are joined with `links` links each.
const allToAll = (n: number, links: number, self: number) =>
  Array.from({ length: n }, (_, gpu) => ({ gpu, links })).filter((p) => p.gpu !== self);

const mlx5 = (n: number) => Array.from({ length: n }, (_, i) => `mlx5_${i}`);

// Renders tab-separated output the way a terminal copy does: tabs expanded to 8-column stops.
const expandTabs = (text: string) =>
  text
    .split("\n")
    .map((line) =>
      line.replace(/[^\t]*\t/g, (cell) => cell.slice(0, -1).padEnd((Math.floor((cell.length - 1) / 8) + 1) * 8)),
    )
    .join("\n");

type Expected = {
  nics: string[];
  gpus: { peers: { gpu: number; links: number }[]; numa: number | null; nearest: string | undefined }[];
};

// Worked out by reading each capture's matrix, affinity columns and NIC legend.
const FIXTURES: Record<string, Expected> = {
  "della-2x-a100-2nic-sys-jdh4-readme.txt": {
    nics: ["mlx5_0", "mlx5_1"],
    gpus: [
      { peers: [], numa: 0, nearest: "mlx5_0" },
      { peers: [], numa: 1, nearest: "mlx5_1" },
    ],
  },
  "dgx-a100-8x-nv12-10nic-legend-oyanghd.txt": {
    nics: mlx5(10),
    gpus: [3, 3, 1, 1, 7, 7, 5, 5].map((numa, i) => ({
      peers: allToAll(8, 12, i),
      numa,
      nearest: `mlx5_${i - (i % 2)}`,
    })),
  },
  "gb200-4gpu-8nic-HEAD10-truncated-sirius-hostfacts.txt": {
    nics: ["NIC0", "NIC1", "NIC2", "NIC3", "NIC4", "NIC5", "NIC6", "NIC7"],
    gpus: [0, 0, 1, 1].map((numa, i) => ({ peers: allToAll(4, 18, i), numa, nearest: "NIC0" })),
  },
  "gb200-4gpu-8nic-legend-full-UNPINNED-REPO.txt": {
    nics: mlx5(8),
    gpus: [0, 0, 1, 1].map((numa, i) => ({ peers: allToAll(4, 18, i), numa, nearest: "mlx5_0" })),
  },
  "h100-single-gpu-ansi-header-gpuexporter.txt": {
    nics: [],
    gpus: [{ peers: [], numa: 0, nearest: undefined }],
  },
  "hgx-h100-8x-nv18-8nic-legend-spaces-sglang30401.txt": {
    nics: mlx5(8),
    gpus: [0, 0, 0, 0, 1, 1, 1, 1].map((numa, i) => ({ peers: allToAll(8, 18, i), numa, nearest: `mlx5_${i}` })),
  },
  "traverse-4x-v100-nv3-4nic-power9-jdh4-readme.txt": {
    nics: mlx5(4),
    gpus: [
      { peers: [{ gpu: 1, links: 3 }], numa: 0, nearest: "mlx5_0" },
      { peers: [{ gpu: 0, links: 3 }], numa: 0, nearest: "mlx5_0" },
      { peers: [{ gpu: 3, links: 3 }], numa: 8, nearest: "mlx5_2" },
      { peers: [{ gpu: 2, links: 3 }], numa: 8, nearest: "mlx5_2" },
    ],
  },
};

describe("parseTopo", () => {
  it.each(Object.entries(FIXTURES))("reads %s", (name, want) => {
    const topo = parseTopo(read(name));
    expect(topo.nics).toEqual(want.nics);
    expect(topo.gpus).toHaveLength(want.gpus.length);
    topo.gpus.forEach((g, i) => {
      const w = want.gpus[i]!;
      expect(g.index).toBe(i);
      expect(g.nvlinkPeers).toEqual(w.peers);
      expect(g.numaNode).toBe(w.numa);
      expect(g.nearestNic).toBe(w.nearest);
      expect(g.nics.map((n) => n.nic).sort()).toEqual([...want.nics].sort());
    });
  });

  it("ranks every NIC nearest first on an 8-GPU HGX H100, ties in column order", () => {
    const { gpus } = parseTopo(read("hgx-h100-8x-nv18-8nic-legend-spaces-sglang30401.txt"));
    expect(gpus[0]!.nics).toEqual([
      { nic: "mlx5_0", path: "PIX" },
      { nic: "mlx5_1", path: "NODE" },
      { nic: "mlx5_2", path: "NODE" },
      { nic: "mlx5_3", path: "NODE" },
      { nic: "mlx5_4", path: "SYS" },
      { nic: "mlx5_5", path: "SYS" },
      { nic: "mlx5_6", path: "SYS" },
      { nic: "mlx5_7", path: "SYS" },
    ]);
    expect(gpus[5]!.nics).toEqual([
      { nic: "mlx5_5", path: "PIX" },
      { nic: "mlx5_4", path: "NODE" },
      { nic: "mlx5_6", path: "NODE" },
      { nic: "mlx5_7", path: "NODE" },
      { nic: "mlx5_0", path: "SYS" },
      { nic: "mlx5_1", path: "SYS" },
      { nic: "mlx5_2", path: "SYS" },
      { nic: "mlx5_3", path: "SYS" },
    ]);
  });

  it("ranks PXB pairs ahead of the rest on a DGX A100", () => {
    const { gpus } = parseTopo(read("dgx-a100-8x-nv12-10nic-legend-oyanghd.txt"));
    expect(gpus[6]!.nics).toEqual([
      { nic: "mlx5_6", path: "PXB" },
      { nic: "mlx5_7", path: "PXB" },
      ...["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_8", "mlx5_9"].map((nic) => ({
        nic,
        path: "SYS",
      })),
    ]);
  });

  it("reads a tab-separated capture the same once its tabs are expanded to spaces", () => {
    for (const name of [
      "della-2x-a100-2nic-sys-jdh4-readme.txt",
      "dgx-a100-8x-nv12-10nic-legend-oyanghd.txt",
      "gb200-4gpu-8nic-HEAD10-truncated-sirius-hostfacts.txt",
      "traverse-4x-v100-nv3-4nic-power9-jdh4-readme.txt",
    ]) {
      const text = read(name);
      expect(expandTabs(text)).not.toContain("\t");
      expect(parseTopo(expandTabs(text))).toEqual(parseTopo(text));
    }
  });

  it("reads CRLF line endings", () => {
    const text = read("traverse-4x-v100-nv3-4nic-power9-jdh4-readme.txt");
    expect(parseTopo(text.replace(/\n/g, "\r\n"))).toEqual(parseTopo(text));
  });

  it("strips ANSI escape sequences from the header and the cells", () => {
    const text =
      "\t\x1b[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n" +
      "GPU0\t X \t\x1b[1mNV4\x1b[0m\tPHB\t0-7\t2\t\tN/A\n" +
      "GPU1\tNV4\t X \tSYS\t8-15\tN/A\t\tN/A\n" +
      "NIC0\tPHB\tSYS\t X \n\nNIC Legend:\n\n  NIC0: mlx5_bond_0\n";
    expect(parseTopo(text)).toEqual({
      nics: ["mlx5_bond_0"],
      gpus: [
        {
          index: 0,
          nvlinkPeers: [{ gpu: 1, links: 4 }],
          numaNode: 2,
          nics: [{ nic: "mlx5_bond_0", path: "PHB" }],
          nearestNic: "mlx5_bond_0",
        },
        {
          index: 1,
          nvlinkPeers: [{ gpu: 0, links: 4 }],
          numaNode: null,
          nics: [{ nic: "mlx5_bond_0", path: "SYS" }],
          nearestNic: "mlx5_bond_0",
        },
      ],
    });
  });

  it("leaves nearestNic out when there is no NIC", () => {
    const [g] = parseTopo(read("h100-single-gpu-ansi-header-gpuexporter.txt")).gpus;
    expect(g).toEqual({ index: 0, nvlinkPeers: [], numaNode: 0, nics: [] });
    expect(g).not.toHaveProperty("nearestNic");
  });

  const header = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n";
  it.each([
    ["an empty string", "", "empty input"],
    ["blank lines", "\n  \n", "empty input"],
    ["binary garbage", "\u0000\u0001PK", "no header line"],
    ["a header with no GPU rows", `${header}\nLegend:\n`, "no GPU0 row"],
    [
      "a GPU row short of cells",
      `${header}GPU0\t X \tNV2\tPIX\t0-7\nGPU1\tNV2\t X \tSYS\t8-15\t1\n`,
      "GPU0 row has 4 cells",
    ],
    [
      "a GPU row with extra cells",
      `${header}GPU0\t X \tNV2\tPIX\t0-7\t0\t9\nGPU1\tNV2\t X \tSYS\t8-15\t1\n`,
      "GPU0 row has 6 cells",
    ],
    ["GPU rows cut short", `${header}GPU0\t X \tNV2\tPIX\t0-7\t0\n`, "header has 2 GPU columns but 1 GPU rows"],
    [
      "an unknown cell",
      `${header}GPU0\t X \tNV2\tFOO\t0-7\t0\nGPU1\tNV2\t X \tSYS\t8-15\t1\n`,
      'unknown cell "FOO" under NIC0',
    ],
  ])("throws on %s", (_, text, what) => {
    expect(() => parseTopo(text)).toThrow(/^nvidia-smi topo -m: /);
    expect(() => parseTopo(text)).toThrow(what);
  });
});
