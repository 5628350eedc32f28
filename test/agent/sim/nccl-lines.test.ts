// The mock engine's NCCL init lines, read by the agent's own parser and judged as the agent judges a real engine's log;
// and their shapes, each found in the real logs of test/fixtures/nccl.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseNcclLog } from "../../../agent/nccl/parse.js";
import { judgeTransport } from "../../../agent/nccl/verdict.js";
import { startMockEngine } from "../../../agent/sim/mock-engine.js";
import { hcaNames, ncclInitLines } from "../../../agent/sim/nccl-lines.js";

const FIXTURES = join(import.meta.dirname, "../../fixtures/nccl");
const REPORT = { NCCL_DEBUG: "INFO", NCCL_DEBUG_SUBSYS: "INIT,NET" };
const IB = { NCCL_MNNVL_ENABLE: "0", NCCL_IB_HCA: "=mlx5_0,mlx5_1" };
const NVLINK = { NCCL_MNNVL_ENABLE: "1", NCCL_CUMEM_ENABLE: "1" };
const ON_IB = { fabric: "ib:ib-demo", hcas: ["mlx5_0", "mlx5_1"] };
const ON_NVLINK = { fabric: "nvlink:a44167d15423d758.7d6b24c07d32e7b3.10118", hcas: [] };
const at = (rank: number, nnodes: number, devices: string) => ({
  LLMGW_RANK: String(rank),
  LLMGW_NNODES: String(nnodes),
  LLMGW_LEADER_ADDR: "127.0.0.1",
  LLMGW_LEADER_PORT: "20001",
  CUDA_VISIBLE_DEVICES: devices,
});

const judged = (env: Record<string, string>, e: { fabric: string; hcas: string[] }) => {
  const text = `${ncclInitLines(env, "l40s-2", 4242).join("\n")}\n`;
  return { text, t: judgeTransport(e, parseNcclLog(text), true) };
};

describe("the mock engine's NCCL lines, as the agent reads them", () => {
  it.each([
    {
      what: "IB on the HCAs placement assigned, one GPU per node",
      env: { ...REPORT, ...IB, ...at(1, 2, "0") },
      on: ON_IB,
      verdict: "ok",
      via: "NET/IB",
      observed: "NET/IB on mlx5_0, mlx5_1 with GPUDirect RDMA (NCCL 2.27.5)",
    },
    {
      what: "IB between nodes of four GPUs, P2P inside each",
      env: { ...REPORT, ...IB, ...at(0, 2, "4,5,6,7"), NCCL_SOCKET_IFNAME: "=eno1" },
      on: ON_IB,
      verdict: "ok",
      via: "NET/IB",
      observed: "NET/IB on mlx5_0, mlx5_1 with GPUDirect RDMA (NCCL 2.27.5)",
    },
    {
      what: "MNNVL across two trays of an NVLink domain",
      env: { ...REPORT, ...NVLINK, ...at(1, 2, "0,1,2,3") },
      on: ON_NVLINK,
      verdict: "ok",
      via: "MNNVL",
      observed: "MNNVL (NCCL 2.27.5)",
    },
    {
      what: "MNNVL on a tray whose NCCL fell back: the clique still carries it",
      env: { ...REPORT, ...NVLINK, ...at(0, 2, "0,1,2,3"), LLMGW_SIM_NCCL_FALLBACK: "socket" },
      on: ON_NVLINK,
      verdict: "ok",
      via: "MNNVL",
      observed: "MNNVL (NCCL 2.27.5)",
    },
    {
      what: "a socket fallback despite the HCAs placement assigned",
      env: { ...REPORT, ...IB, ...at(1, 2, "0"), LLMGW_SIM_NCCL_FALLBACK: "socket" },
      on: ON_IB,
      verdict: "degraded",
      via: "NET/Socket",
      observed: "NET/Socket on eth0 (NCCL 2.27.5)",
      reason: "placed on ib:ib-demo (mlx5_0,mlx5_1); NCCL uses NET/Socket on eth0",
    },
    {
      what: "several nodes with neither HCAs nor MNNVL: sockets",
      env: { ...REPORT, ...at(0, 2, "0,1"), NCCL_SOCKET_IFNAME: "=eno1" },
      on: ON_IB,
      verdict: "degraded",
      via: "NET/Socket",
      observed: "NET/Socket on eno1 (NCCL 2.27.5)",
      reason: "placed on ib:ib-demo (mlx5_0,mlx5_1); NCCL uses NET/Socket on eno1",
    },
    {
      what: "one node of eight GPUs: P2P only",
      env: { ...REPORT, CUDA_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7" },
      on: { fabric: "single", hcas: [] },
      verdict: "local",
      via: "P2P",
      observed: "P2P inside the node (NCCL 2.27.5)",
    },
  ])("$what: $verdict", ({ env, on, verdict, via, observed, reason }) => {
    const { t } = judged(env, on);
    expect(t).toEqual({
      expected: on.fabric === "ib:ib-demo" ? "ib:ib-demo (mlx5_0,mlx5_1)" : on.fabric,
      ncclVersion: "2.27.5",
      verdict,
      via,
      observed,
      ...(reason ? { reason } : {}),
    });
  });

  it("prints the lines of the real logs: version, IB devices, the network, the communicator, each channel", () => {
    const { text } = judged({ ...REPORT, ...IB, ...at(0, 2, "0") }, ON_IB);
    for (const line of [
      "l40s-2:4242:4242 [0] NCCL INFO NCCL version 2.27.5+cuda12.9",
      "l40s-2:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.11<0>",
      "l40s-2:4242:4242 [0] NCCL INFO Using network IB",
      "l40s-2:4242:4242 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
      "l40s-2:4242:4242 [0] NCCL INFO Channel 01/0 : 1[0] -> 0[0] [receive] via NET/IB/1/GDRDMA",
    ])
      expect(text).toContain(`${line}\n`);
    expect(text).toMatch(/ NCCL INFO comm 0x[0-9a-f]{12} rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n/);
    const fallback = judged({ ...REPORT, ...IB, ...at(0, 2, "0"), LLMGW_SIM_NCCL_FALLBACK: "socket" }, ON_IB).text;
    for (const line of [
      "NET/IB : No device found.",
      "NET/Socket : Using [0]eth0:10.0.0.11<0>",
      "Using network Socket",
      "Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0",
    ])
      expect(fallback).toContain(` NCCL INFO ${line}\n`);
    expect(fallback).not.toContain("NET/IB : Using");
    const nvl = judged({ ...REPORT, ...NVLINK, ...at(0, 2, "0,1,2,3") }, ON_NVLINK).text;
    expect(nvl).toContain("[3] NCCL INFO Channel 00/0 : 3[3] -> 4[0] via P2P/MNNVL\n");
    expect(nvl).toMatch(/\[2\] NCCL INFO comm 0x\w+ rank 2 nRanks 8 nNodes 1 localRanks 8 localRank 2 MNNVL 1\n/);
    expect(judged({ ...REPORT, ...IB, ...at(0, 2, "0,1") }, ON_IB).text).toContain(
      "[0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n",
    );
  });

  it("prints each kind of line in a shape that a real log has", () => {
    // numbers, addresses, names, the values of variables and how many devices a list has aside; a [receive] edge is
    // printed as its [send]
    const shape = (l: string) =>
      /^[^\s:]+:\d+:\d+ \[\d+\] NCCL INFO (.*)$/
        .exec(l)?.[1]
        ?.replace(/( set (?:by environment )?to ).*$/, "$1VALUE")
        .replace("[receive]", "[send]")
        .replace(/\[\d+\][\w.-]+:\d+\/(IB|RoCE)\b/g, "DEV")
        .replace(/DEV(\s+DEV)*/g, "DEVICES")
        .replace(/0x[0-9a-f]+/g, "0x#")
        .replace(/\b[a-z][a-z0-9]*\d[a-z0-9]*:(\d+\.){3}\d+<0>/g, "IF:IP<0>")
        .replace(/[0-9a-f]*\d[0-9a-f]*/g, "#")
        .replace(/\s+/g, " ")
        .trim();
    const real = new Set(
      readdirSync(FIXTURES)
        .filter((f) => f.endsWith(".log"))
        .flatMap((f) => readFileSync(join(FIXTURES, f), "utf8").split("\n"))
        .map(shape)
        .filter((s) => s !== undefined),
    );
    const ours = [
      { ...REPORT, ...IB, ...at(0, 2, "0,1"), NCCL_SOCKET_IFNAME: "=eth0" },
      { ...REPORT, ...IB, ...at(1, 2, "0,1"), LLMGW_SIM_NCCL_FALLBACK: "socket" },
      { ...REPORT, ...NVLINK, ...at(0, 2, "0,1,2,3") },
    ].flatMap((env) => ncclInitLines(env, "l40s-2", 4242));
    expect(ours.length).toBeGreaterThan(50);
    expect([...new Set(ours.map(shape))].filter((s) => !real.has(s ?? ""))).toEqual([]);
  });

  it("prints nothing unless NCCL_DEBUG=INFO (the agent sets it only for engines of several GPUs)", () => {
    expect(ncclInitLines({ ...IB, ...at(0, 2, "0") }, "h", 1)).toEqual([]);
    expect(ncclInitLines({ NCCL_DEBUG: "WARN", ...IB, ...at(0, 2, "0") }, "h", 1)).toEqual([]);
  });

  it("reads NCCL_IB_HCA's names: `=` for exact names, `:port`, an exclusion list as none", () => {
    expect(hcaNames("=mlx5_0,mlx5_1")).toEqual(["mlx5_0", "mlx5_1"]);
    expect(hcaNames("mlx5_0:1,mlx5_3")).toEqual(["mlx5_0", "mlx5_3"]);
    expect(hcaNames("^mlx5_bond_0")).toEqual([]);
    expect(hcaNames(undefined)).toEqual([]);
  });

  it("the mock engine prints them before it listens as ready, and not without NCCL_DEBUG", async () => {
    const out: string[] = [];
    const env = { ...REPORT, ...IB, ...at(0, 2, "0") };
    const e = await startMockEngine({ model: "m", host: "127.0.0.1", env, ncclLog: (t) => out.push(t) });
    try {
      expect(out).toHaveLength(1);
      expect(out[0]).toMatch(/^\S+:\d+:\d+ \[0\] NCCL INFO cudaDriverVersion/);
      expect(out[0]!.endsWith(" - Init COMPLETE\n")).toBe(true);
      expect(judgeTransport(ON_IB, parseNcclLog(out[0]!), true)?.verdict).toBe("ok");
      expect((await fetch(`http://127.0.0.1:${e.port}/health`)).status).toBe(200);
    } finally {
      await e.close();
    }
    const quiet: string[] = [];
    const q = await startMockEngine({ model: "m", host: "127.0.0.1", env: { ...IB }, ncclLog: (t) => quiet.push(t) });
    await q.close();
    expect(quiet).toEqual([]);
  });
});
