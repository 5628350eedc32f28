// Pure parser of `nvidia-smi topo -m`: NVLink peers, NUMA node and NICs ranked by PCIe distance, per GPU.

export type TopoPath = "X" | "PIX" | "PXB" | "PHB" | "NODE" | "SYS" | "NV";
export type TopoGpu = {
  index: number; // GPU<n>
  nvlinkPeers: { gpu: number; links: number }[]; // `NV#` cells to other GPUs, sorted by gpu
  numaNode: number | null; // first integer of `NUMA Affinity`; null when N/A or absent
  nics: { nic: string; path: "PIX" | "PXB" | "PHB" | "NODE" | "SYS" }[]; // nearest first, ties in column order
  nearestNic?: string; // nics[0].nic when there is any NIC
};
export type Topo = { gpus: TopoGpu[]; nics: string[] }; // nics: device names (mlx5_0 …) in column order

type NicPath = TopoGpu["nics"][number]["path"];

const SRC = "nvidia-smi topo -m: ";
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is what starts the colour codes this removes
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
// Space-rendered headers lose their tabs, so multi-word column names are matched by name.
const HEADER_TOKEN = /CPU Affinity|NUMA Affinity|GPU NUMA ID|\S+/g;
const INFO_COLUMNS = new Set(["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]);
const NIC_RANK: Record<NicPath, number> = { PIX: 0, PXB: 1, PHB: 2, NODE: 3, SYS: 4 };
const GPU_NAME = /^GPU(\d+)$/;
const NV = /^NV(\d+)$/;
const LEGEND_ENTRY = /^\s*(NIC\d+):\s*(\S+)\s*$/;

/** Splits a header line into column names, keeping `CPU Affinity` and the like whole. */
function headerColumns(line: string): string[] {
  const cells = line.includes("\t") ? line.split("\t") : (line.match(HEADER_TOKEN) ?? []);
  return cells.map((c) => c.trim()).filter(Boolean);
}

/** Splits a matrix row into its non-empty cells, the row label first. */
function rowCells(line: string): string[] {
  // Empty cells carry nothing: nvidia-smi emits an extra tab before `GPU NUMA ID` and trailing tabs on NIC
  // rows, and a space-rendered copy drops both, so tab and space captures agree once they are removed.
  return line.trim().split(/\s+/).filter(Boolean);
}

/** Maps `NICn` to its device name from the `NIC Legend:` section. */
function nicLegend(lines: string[]): Map<string, string> {
  const legend = new Map<string, string>();
  for (const line of lines) {
    const m = LEGEND_ENTRY.exec(line);
    if (m) legend.set(m[1]!, m[2]!);
  }
  return legend;
}

/** Reads the first integer of a `NUMA Affinity` cell such as `0,3-9,11-17`; null for `N/A` or no cell. */
function firstNumaNode(cell: string | undefined): number | null {
  const m = /^\d+/.exec(cell ?? "");
  return m ? Number(m[0]) : null;
}

/** Parses `nvidia-smi topo -m`; throws an Error starting `nvidia-smi topo -m: ` on malformed input. */
export function parseTopo(text: string): Topo {
  if (!text.trim()) throw new Error(`${SRC}empty input`);
  const lines = text.replace(ANSI, "").split(/\r?\n/);
  // The header is the first line naming GPU0 first; GPU rows start with GPU0 too but always hold an `X`.
  const h = lines.findIndex((l) => {
    const cols = headerColumns(l);
    return cols[0] === "GPU0" && !cols.includes("X");
  });
  if (h < 0) throw new Error(`${SRC}no header line starting with GPU0`);
  const header = headerColumns(lines[h]!);
  const firstInfo = header.findIndex((c) => INFO_COLUMNS.has(c));
  const matrix = firstInfo < 0 ? header : header.slice(0, firstInfo);
  const gpuColumns = matrix.filter((c) => GPU_NAME.test(c));
  const nicColumns = matrix.slice(gpuColumns.length);
  if (matrix.slice(0, gpuColumns.length).some((c) => !GPU_NAME.test(c))) {
    throw new Error(`${SRC}GPU columns are not all before the NIC columns`);
  }
  const legend = nicLegend(lines.slice(h + 1));
  const nics = nicColumns.map((c) => legend.get(c) ?? c);
  const numaAt = header.indexOf("NUMA Affinity");

  const end = lines.findIndex((l, i) => i > h && !l.trim());
  const rows = lines.slice(h + 1, end < 0 ? undefined : end).map(rowCells);
  const gpuRows = rows.filter((r) => GPU_NAME.test(r[0] ?? ""));
  if (!gpuRows.some((r) => r[0] === "GPU0")) throw new Error(`${SRC}no GPU0 row`);
  if (gpuRows.length !== gpuColumns.length) {
    throw new Error(`${SRC}header has ${gpuColumns.length} GPU columns but ${gpuRows.length} GPU rows`);
  }
  const gpus = gpuRows.map(([label, ...cells]) => {
    if (cells.length !== header.length) {
      throw new Error(`${SRC}${label} row has ${cells.length} cells, header has ${header.length} columns`);
    }
    return gpuFromRow(label!, cells, gpuColumns, nics, numaAt);
  });
  return { gpus, nics };
}

/** Builds one GPU from its row cells, which line up with the header columns. */
function gpuFromRow(label: string, cells: string[], gpuColumns: string[], nics: string[], numaAt: number): TopoGpu {
  const nvlinkPeers: TopoGpu["nvlinkPeers"] = [];
  gpuColumns.forEach((col, i) => {
    const cell = cells[i]!;
    const nv = NV.exec(cell);
    if (nv) nvlinkPeers.push({ gpu: Number(GPU_NAME.exec(col)![1]), links: Number(nv[1]) });
    else if (cell !== "X" && !Object.hasOwn(NIC_RANK, cell)) throw unknownCell(label, cell, col);
  });
  const ranked = nics.map((nic, i) => {
    const path = cells[gpuColumns.length + i]!;
    if (!Object.hasOwn(NIC_RANK, path)) throw unknownCell(label, path, nic);
    return { nic, path: path as NicPath };
  });
  // Array.prototype.sort is stable, so equal paths keep their column order.
  ranked.sort((a, b) => NIC_RANK[a.path] - NIC_RANK[b.path]);
  const gpu: TopoGpu = {
    index: Number(GPU_NAME.exec(label)![1]),
    nvlinkPeers: nvlinkPeers.sort((a, b) => a.gpu - b.gpu),
    numaNode: numaAt < 0 ? null : firstNumaNode(cells[numaAt]),
    nics: ranked,
  };
  if (ranked[0]) gpu.nearestNic = ranked[0].nic;
  return gpu;
}

/** Names a matrix cell that is none of X, NV#, PIX, PXB, PHB, NODE, SYS. */
function unknownCell(label: string, cell: string, column: string): Error {
  return new Error(`${SRC}${label} has unknown cell ${JSON.stringify(cell)} under ${column}`);
}
