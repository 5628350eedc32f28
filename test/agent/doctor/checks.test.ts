import { describe, expect, it } from "vitest";
import { exitCodeOf, formatDoctor, runChecks } from "../../../agent/doctor/checks.js";
import { inventoryWarnings } from "../../../agent/inventory.js";
import { DoctorReport } from "../../../shared/schemas/doctor.js";
import type { Inventory } from "../../../shared/schemas/inventory.js";
import { A100_MIG_L, A100_MIG_XML, gb200, H100_XML, inputOf, inventoryOf, serverOk } from "./inputs.js";

const IDS = [
  "driver",
  "nvml",
  "gpu-ecc",
  "gpu-memory-repair",
  "gpu-temperature",
  "gpu-processes",
  "mig",
  "nvlink-fabric",
  "imex",
  "imex-channel",
  "imex-peers",
  "ib-ports",
  "ib-fabrics",
  "gpudirect-rdma",
  "engines",
  "discovery",
  "control-plane",
  "node-token",
  "clock-skew",
];

describe("runChecks", () => {
  it("runs every check once, in a fixed order, and counts them", () => {
    const r = runChecks(inputOf(inventoryOf(H100_XML), { server: serverOk() }));
    expect(r.checks.map((c) => c.id)).toEqual(IDS);
    expect(r.summary).toEqual({ ok: 15, warn: 0, fail: 0, skip: 4 });
    expect(DoctorReport.parse(r)).toEqual(r);
    expect(exitCodeOf(r)).toBe(0);
  });

  it("a single failing check makes the exit status 1; warnings do not", () => {
    const warn = inputOf({ ...inventoryOf(H100_XML), engines: { probed: ["vllm"], versions: {} } });
    expect(exitCodeOf(runChecks(warn))).toBe(0);
    const fail = inputOf(gb200(), {
      server: serverOk({ token: { kind: "refused", nodeId: "n", status: 401, message: "HTTP 401" } }),
    });
    const r = runChecks(fail);
    expect(r.summary.fail).toBe(1);
    expect(exitCodeOf(r)).toBe(1);
  });
});

describe("formatDoctor", () => {
  it("prints a table of check, status and finding, each fix below its finding, then the counts", () => {
    const inv: Inventory = { ...gb200(), imex: { state: "down", channels: 0 } };
    const text = formatDoctor(runChecks(inputOf(inv)));
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^CHECK +STATUS +FINDING$/);
    const col = lines[0]!.indexOf("FINDING");
    const imex = lines.findIndex((l) => l.startsWith("imex "));
    expect(lines[imex]).toMatch(/^imex +FAIL +IMEX down: /);
    expect(lines[imex]!.indexOf("IMEX down")).toBe(col);
    expect(lines[imex + 1]!.slice(0, col).trim()).toBe("");
    expect(lines[imex + 1]!.slice(col)).toMatch(/^fix: `systemctl restart nvidia-imex`/);
    expect(text).toMatch(
      /\n19 checks: \d+ ok, 0 warn, 2 fail, \d+ skipped — this node has problems that keep work off it\n$/,
    );
  });

  it("says the node is ready when nothing warns or fails", () => {
    expect(formatDoctor(runChecks(inputOf(inventoryOf(H100_XML), { server: serverOk() })))).toMatch(
      /— this node is ready\n$/,
    );
  });
});

/** Copies of real captures changed the way `llmgw agent inventory` warns about (crafted). */
const warned: [string, () => Inventory][] = [
  [
    "could not read a source",
    () => ({ ...inventoryOf(H100_XML), errors: [{ source: "nvidia-smi topo -m", message: "exited with status 2" }] }),
  ],
  [
    "uncorrectable ECC",
    () => ({
      ...inventoryOf(H100_XML),
      gpus: inventoryOf(H100_XML).gpus.map((g, i) =>
        i
          ? g
          : {
              ...g,
              health: {
                ...g.health,
                problems: ["1 uncorrectable ECC errors since the driver loaded"],
                eccUncorrectableVolatile: 1,
              },
            },
      ),
    }),
  ],
  ["a process on a card (real A10G capture)", () => inventoryOf("smi-xml/a10g-v11-telegraf.xml")],
  ["MIG on, nothing carved (CRAFTED fixture)", () => inventoryOf("smi-xml/CRAFTED-a100-mig-enabled-no-instances.xml")],
  [
    "MIG change pending (CRAFTED fixture)",
    () => inventoryOf("smi-xml/CRAFTED-a100-mig-disable-pending.xml", A100_MIG_L),
  ],
  ["mixed domains (CRAFTED fixture)", () => gb200("smi-xml/CRAFTED-gb200-gpu3-mixed-cluster-uuid.xml")],
  ["fabric In Progress (CRAFTED fixture)", () => gb200("smi-xml/CRAFTED-gb200-tray-fabric-in-progress.xml")],
  ["bandwidth degraded (CRAFTED fixture)", () => gb200("smi-xml/CRAFTED-gb200-gpu2-limited-capacity.xml")],
  ["IMEX down in a domain", () => ({ ...gb200(), imex: { state: "down", channels: 1 } })],
  ["IMEX without a channel in a domain", () => ({ ...gb200(), imex: { state: "ready", channels: 0 } })],
  [
    "a port in INIT",
    () => ({ ...inventoryOf(H100_XML), hcas: [{ name: "mlx5_0", ports: [{ port: 1, state: "INIT" }] }] }),
  ],
  ["no InfiniBand adapter", () => ({ ...inventoryOf(H100_XML), hcas: [] })],
];

describe("doctor and `agent inventory` agree", () => {
  it.each(warned)("%s: inventory warns and doctor does not pass it", (_, make) => {
    const inv = make();
    expect(inventoryWarnings(inv).length).toBeGreaterThan(0);
    const r = runChecks(
      inputOf(inv, {
        config: { fabrics: [], nvml: false, commandEngine: true, stateDir: "/s", imexChannelsDir: "/c" },
      }),
    );
    expect(r.summary.warn + r.summary.fail).toBeGreaterThan(0);
  });

  it.each([
    ["H100 HGX", () => inventoryOf(H100_XML)],
    ["GB200 tray with IMEX", () => gb200()],
    ["A100 with MIG instances", () => inventoryOf(A100_MIG_XML, A100_MIG_L)],
  ])("%s: neither warns", (_, make) => {
    const inv = make();
    expect(inventoryWarnings(inv)).toEqual([]);
    const r = runChecks(inputOf(inv, { server: serverOk() }));
    expect(r.checks.filter((c) => c.status === "warn" || c.status === "fail")).toEqual([]);
  });
});
