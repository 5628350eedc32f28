import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createNcclReader, parseNcclLog } from "../../../agent/nccl/parse.js";
import { judgeTransport } from "../../../agent/nccl/verdict.js";

const DIR = join(import.meta.dirname, "../../fixtures/nccl");
const read = (f: string) => readFileSync(join(DIR, f), "utf8");
const log = (f: string) => parseNcclLog(read(f));
const ib = (hcas: string[]) => ({ fabric: "ib:fabric-a", hcas });
const NVLINK = { fabric: "nvlink:a44167d15423d758.7d6b24c07d32e7b3.10118", hcas: [] };

/** Every real excerpt, with what a reader must find in it (read off the excerpt by hand). */
const CASES: {
  file: string;
  version?: string;
  /** The verdict for an IB placement on these HCAs (its own devices: the transport it was placed for). */
  onIb?: { hcas: string[]; verdict: "ok" | "degraded" | "unverified"; observed?: RegExp; reason?: RegExp };
  /** The verdict for a multi-node NVLink placement. */
  onNvlink: "ok" | "degraded" | "unverified";
  /** What a one-node shard reports it uses inside the node. */
  inside?: RegExp;
}[] = [
  {
    file: "roce-gdrdma-2.27.5-slurmv4-sglang.log",
    version: "2.27.5",
    onIb: {
      hcas: ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_11"],
      verdict: "ok",
      observed:
        /^NET\/IB \(RoCE\) on mlx5_0, mlx5_1, mlx5_2, mlx5_5, mlx5_6, mlx5_7, mlx5_8, mlx5_11 with GPUDirect RDMA \(NCCL 2\.27\.5\)$/,
    },
    onNvlink: "degraded",
    inside: /^P2P inside the node/,
  },
  {
    file: "roce-gdrdma-pxn-2.27.5-slurmv4-torchrun.log",
    version: "2.27.5",
    onIb: { hcas: ["mlx5_0"], verdict: "ok", observed: /^NET\/IB \(RoCE\) on mlx5_0 with GPUDirect RDMA/ },
    onNvlink: "degraded",
  },
  {
    file: "roce-gdrdma-2.29.3-slurmv4-sglang.log",
    version: "2.29.3",
    onIb: {
      hcas: ["mlx5_0", "mlx5_1"],
      verdict: "degraded",
      reason: /NCCL uses NET\/IB on mlx5_2, mlx5_3, .*not assigned/,
    },
    onNvlink: "degraded",
  },
  { file: "mnnvl-gb200-2.30.7-nccl2303.log", version: "2.30.7", onNvlink: "ok", inside: /^P2P inside the node/ },
  // NCCL_MNNVL_ENABLE=0 on a GB200 tray: the fabric is there, NCCL does not use it
  { file: "mnnvl-disabled-gb200-2.30.7-nccl2303.log", onNvlink: "degraded" },
  // the cards report their clique, but the excerpt ends before NCCL says what it chose
  { file: "mnnvl-nvls-gb200-nccl1769.log", onNvlink: "unverified" },
  {
    file: "roce-ibext-nvls-p2p-cumem-2.22.3-nccl1538.log",
    onIb: { hcas: ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"], verdict: "ok" },
    onNvlink: "degraded",
    inside: /^P2P and NVLS inside the node/,
  },
  {
    file: "ibext-v8-nogdr-p2p-cumem-nccl1814.log",
    onIb: { hcas: [], verdict: "ok", observed: /^NET\/IB without GPUDirect RDMA$/ },
    onNvlink: "degraded",
  },
  {
    file: "ib-gdrdma-p2p-cumem-h20-nccl1189.log",
    onIb: { hcas: [], verdict: "ok", observed: /with GPUDirect RDMA/ },
    onNvlink: "degraded",
    inside: /^P2P inside the node/,
  },
  {
    file: "ib-nogdr-p2p-read-a100-nccl1412.log",
    onIb: { hcas: [], verdict: "ok", observed: /without GPUDirect RDMA/ },
    onNvlink: "degraded",
  },
  {
    file: "ib-2.19.3-nccltests182.log",
    version: "2.19.3",
    onIb: { hcas: ["mlx5_0"], verdict: "ok", observed: /^NET\/IB on mlx5_0 \(NCCL 2\.19\.3\)$/ },
    onNvlink: "degraded",
  },
  {
    file: "ib-sharp-ibext-2.12.9-nccl988.log",
    version: "2.12.9",
    onIb: {
      hcas: ["mlx5_0", "mlx5_1"],
      verdict: "degraded",
      reason: /on mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7, not/,
    },
    onNvlink: "degraded",
  },
  {
    file: "ib-gdrdma-legacy-busid-nccl707.log",
    onIb: { hcas: ["mlx5_5"], verdict: "ok", observed: /^NET\/IB with GPUDirect RDMA$/ },
    onNvlink: "degraded",
  },
  {
    file: "roce-2.18.5-nccl1052.log",
    version: "2.18.5",
    onIb: { hcas: ["mlx5_0"], verdict: "degraded", reason: /NCCL uses NET\/IB on mlx5_4, not assigned to the shard$/ },
    onNvlink: "degraded",
  },
  {
    file: "roce-2.19.3-nccltests185.log",
    version: "2.19.3",
    onIb: { hcas: ["mlx5_10", "mlx5_11"], verdict: "ok", observed: /^NET\/IB \(RoCE\) on mlx5_10, mlx5_11 / },
    onNvlink: "degraded",
  },
  {
    file: "roce-gdr-disabled-nccl1537.log",
    onIb: {
      hcas: ["mlx5_0", "mlx5_1"],
      verdict: "ok",
      observed: /^NET\/IB \(RoCE\) on mlx5_0, mlx5_1 without GPUDirect RDMA$/,
    },
    onNvlink: "degraded",
  },
  {
    file: "socket-fallback-2.19.3-nccl1267.log",
    version: "2.19.3",
    onIb: {
      hcas: ["mlx5_0", "mlx5_1"],
      verdict: "degraded",
      reason: /^placed on ib:fabric-a \(mlx5_0,mlx5_1\); NCCL uses NET\/Socket on ens7$/,
    },
    onNvlink: "degraded",
  },
  {
    file: "socket-fallback-2.4.7-nccl226.log",
    version: "2.4.7",
    onIb: { hcas: ["mlx5_0"], verdict: "degraded", reason: /NCCL uses NET\/Socket on ens3$/ },
    onNvlink: "degraded",
  },
  {
    file: "socket-shm-nccltests166.log",
    onIb: { hcas: ["mlx5_0"], verdict: "degraded", reason: /NCCL uses NET\/Socket$/ },
    onNvlink: "degraded",
    inside: /^SHM inside the node/,
  },
  { file: "shm-nccl1817.log", onNvlink: "unverified", inside: /^SHM inside the node$/ },
  { file: "nvls-p2p-direct-nccltests213.log", onNvlink: "unverified", inside: /^P2P and NVLS inside the node$/ },
];

describe("NCCL logs", () => {
  it("has a case for every collected excerpt", () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith(".log"));
    expect(CASES.map((c) => c.file).sort()).toEqual(files.sort());
  });

  for (const c of CASES)
    it(`reads ${c.file}`, () => {
      const o = log(c.file);
      expect(o.version).toBe(c.version);
      if (c.onIb) {
        const t = judgeTransport(ib(c.onIb.hcas), o, true)!;
        expect(t.verdict).toBe(c.onIb.verdict);
        if (c.onIb.observed) expect(t.observed).toMatch(c.onIb.observed);
        if (c.onIb.reason) expect(t.reason).toMatch(c.onIb.reason);
      }
      expect(judgeTransport(NVLINK, o, true)?.verdict).toBe(c.onNvlink);
      const one = judgeTransport({ fabric: "single", hcas: [] }, o, true);
      if (c.inside) expect(one).toMatchObject({ verdict: "local", observed: expect.stringMatching(c.inside) });
    });

  it("maps a channel's device index through its own process's device list (PXN `0(8)` included)", () => {
    const o = log("roce-gdrdma-pxn-2.27.5-slurmv4-torchrun.log");
    expect([...o.netDevicesUsed]).toEqual(["mlx5_0"]);
    expect(o.gdrChannels).toBeGreaterThan(0);
    expect(o.plainNetChannels).toBe(0);
    expect(o.mnnvl).toBe(false);
    expect(o.nNodes).toBe(2);
  });

  it("finds MNNVL in the clique line, the communicator line and the channels", () => {
    const text = read("mnnvl-gb200-2.30.7-nccl2303.log").split("\n");
    for (const pick of [/MNNVL 1 cliqueId/, /nNodes \d+ .* MNNVL 1/, /via P2P\/MNNVL/]) {
      const line = text.find((l) => pick.test(l));
      expect(line, String(pick)).toBeDefined();
      expect(parseNcclLog(line!).mnnvl, String(pick)).toBe(true);
    }
  });

  it("reads lines behind a timestamp or an MPI launcher's prefix, and the bare version banner of older NCCL", () => {
    const line = read("socket-fallback-2.19.3-nccl1267.log")
      .split("\n")
      .find((l) => l.includes("NET/Socket : Using"))!;
    for (const wrapped of [`[2026-07-23 04:16:01] ${line}`, `[1,0]<stdout>:${line}`])
      expect(parseNcclLog(wrapped).socketInterfaces).toEqual(["ens7"]);
    expect(parseNcclLog("NCCL version 2.19.3+cuda12.3").version).toBe("2.19.3");
  });

  it("reads a log fed in pieces as it would a whole one", () => {
    const text = read("roce-gdrdma-2.27.5-slurmv4-sglang.log");
    const r = createNcclReader();
    for (const l of text.split("\n")) r.feed(l);
    const whole = parseNcclLog(text);
    expect(judgeTransport(ib(["mlx5_0"]), r.observation(), true)).toEqual(judgeTransport(ib(["mlx5_0"]), whole, true));
  });

  it("is pending until NCCL says, and unverified once the engine serves without a word from it", () => {
    const nothing = parseNcclLog("INFO 12-01 10:00:00 api_server.py:1 vLLM API server version 0.11.0");
    expect(judgeTransport(ib(["mlx5_0"]), nothing, false)?.verdict).toBe("pending");
    const t = judgeTransport(ib(["mlx5_0"]), nothing, true)!;
    expect(t.verdict).toBe("unverified");
    expect(t.reason).toMatch(/^placed on ib:fabric-a \(mlx5_0\); no NCCL lines in the engine's log/);
    expect(judgeTransport(NVLINK, nothing, false)?.verdict).toBe("pending");
    // a one-node shard NCCL said nothing about reports nothing
    expect(judgeTransport({ fabric: "single", hcas: [] }, nothing, true)).toBeUndefined();
  });

  it("says degraded for an NVLink placement whose NCCL crosses the nodes over IB", () => {
    const t = judgeTransport(NVLINK, log("ib-nogdr-p2p-read-a100-nccl1412.log"), true)!;
    expect(t.reason).toBe(
      "placed on nvlink:a44167d15423d758.7d6b24c07d32e7b3.10118; NCCL uses NET/IB without GPUDirect RDMA (MNNVL 0)",
    );
    expect(t.via).toBe("NET/IB");
  });
});
