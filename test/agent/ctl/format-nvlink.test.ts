// `llmgw ctl nvlink`'s text, on the view the API gives of the crafted fleet (test/helpers/nvlink-fleet.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatNvlink, gpuCell } from "../../../agent/ctl/format-nvlink.js";
import { type NvlinkGpu, NvlinkView } from "../../../shared/schemas/nvlink.js";
import { createTestApp, type TestApp } from "../../helpers/app.js";
import { DOMAIN, declareNvlinkDeployment, registerFleet } from "../../helpers/nvlink-fleet.js";

let t: TestApp;
let out: string;
let tokens: Record<string, string>;
beforeAll(async () => {
  t = await createTestApp();
  tokens = await registerFleet(t.call, t.adminToken);
  await declareNvlinkDeployment(t.call, t.adminToken);
  await t.settle();
  out = formatNvlink(NvlinkView.parse((await t.admin("GET", "/api/v1/nvlink")).json));
});
afterAll(() => t.close());

/** The lines of `out` from the one starting with `head` (trimmed) to the next blank line or section at its indent. */
function section(head: string): string[] {
  const lines = out.split("\n");
  const at = lines.findIndex((l) => l.trim() === head);
  expect(at, head).toBeGreaterThanOrEqual(0);
  const indent = lines[at]!.length - lines[at]!.trimStart().length;
  const rest = lines.slice(at + 1);
  const end = rest.findIndex((l) => !l.trim() || l.length - l.trimStart().length <= indent);
  return (end < 0 ? rest : rest.slice(0, end)).map((l) => l.trim().replace(/\s{2,}/g, " | "));
}

describe("formatNvlink", () => {
  it("heads each domain with how many trays are eligible, then the trays in tray order", () => {
    const lines = out.split("\n");
    expect(lines[0]).toBe(
      `NVLink domain ${DOMAIN}: 2 of 4 tray(s) eligible; degraded, so placed on after healthy domains`,
    );
    expect(lines.slice(1, 6).map((l) => l.trim().split(/\s{2,}/))).toEqual([
      ["TRAY", "NODE", "STATE", "JOINED", "FABRIC HEALTH", "IMEX", "ELIGIBLE"],
      ["1", "gb-tray-a", "ready", "4/4", "Healthy", "ready, 1 channel(s)", "yes"],
      ["2", "gb-tray-b", "ready", "3/4", "Healthy", "ready, 1 channel(s)", "NO"],
      ["3", "gb-tray-c", "ready", "4/4", "Limited Capacity", "ready, 1 channel(s)", "yes, degraded"],
      ["4", "gb-tray-d", "ready", "4/4", "Healthy", "down, 0 channel(s)", "NO"],
    ]);
  });

  it("shows every GPU joined or why not", () => {
    expect(section("GPUs")).toEqual([
      "gb-tray-a | 0 joined; 1 joined; 2 joined; 3 joined",
      "gb-tray-b | 0 joined; 1 joined; 2 NOT JOINED: fabric In Progress; 3 joined",
      "gb-tray-c | 0 joined; 1 joined; 2 joined, degraded; 3 joined",
      "gb-tray-d | 0 joined; 1 joined; 2 joined; 3 joined",
    ]);
  });

  it("names every reason a tray is out, and what makes one degraded", () => {
    expect(section("Out of placement")).toEqual(["gb-tray-b | GPU 2 fabric In Progress", "gb-tray-d | IMEX down"]);
    expect(section("Degraded")).toEqual(["gb-tray-c | GPU 2 fabric health Limited Capacity, bandwidth Degraded"]);
  });

  it("lists the shards placed in the domain", () => {
    expect(
      section("Shards")
        .slice(1)
        .map((l) => l.split(" | ").slice(1, 4)),
    ).toEqual([
      ["big", "0", "gb-tray-a"],
      ["big", "1", "gb-tray-c"],
    ]);
  });

  it("says which shard's NCCL is off its fabric, beside its tray and in the shards' TRANSPORT column", async () => {
    const view = NvlinkView.parse((await t.admin("GET", "/api/v1/nvlink")).json);
    const s = view.domains[0]!.shards.find((x) => x.node === "gb-tray-c")!;
    const reason = `placed on ${s.fabric}; NCCL uses NET/IB on mlx5_0 (MNNVL 0)`;
    const r = await t.call("POST", "/api/v1/agents/gb-tray-c/status", {
      token: tokens["gb-tray-c"],
      body: {
        shards: [
          {
            shardId: s.shardId,
            state: "ready",
            transport: { verdict: "degraded", expected: s.fabric, via: "NET/IB", reason },
          },
        ],
      },
    });
    expect(r.status).toBe(200);
    const text = formatNvlink(NvlinkView.parse((await t.admin("GET", "/api/v1/nvlink")).json));
    expect(text).toContain(`  Warnings\n    gb-tray-c  shard ${s.shardId} transport degraded: ${reason}\n`);
    expect(text).toMatch(new RegExp(`${s.shardId}\\s+big\\s+1\\s+gb-tray-c\\s+\\S+\\s+ready\\s+degraded \\(NET/IB\\)`));
  });

  it("lists the nodes in no domain, and why", () => {
    expect(section("Not in a multi-node domain")).toEqual([
      "hgx-01 | ready | 8 GPU(s) | single-machine NVSwitch (cluster UUID is zero): not a multi-node NVLink domain",
    ]);
    expect(out.trimEnd().split("\n").at(-1)).toBe("No NVLink fabric reported: mig-01");
  });

  it("says so when there is no domain at all", () => {
    expect(formatNvlink({ domains: [], standalone: [], noFabric: [] })).toBe("no multi-node NVLink domain\n");
    expect(formatNvlink({ domains: [], standalone: [], noFabric: ["a", "b"] })).toBe(
      "no multi-node NVLink domain\n\nNo NVLink fabric reported: a, b\n",
    );
  });
});

describe("gpuCell", () => {
  const gpu = (over: Partial<NvlinkGpu>): NvlinkGpu => ({
    index: 2,
    uuid: "GPU-x",
    class: "gb200-185g",
    module: 3,
    joined: true,
    domain: DOMAIN,
    notJoined: null,
    degraded: false,
    fabric: null,
    ...over,
  });
  it.each([
    [gpu({}), "2 joined"],
    [gpu({ degraded: true }), "2 joined, degraded"],
    [gpu({ joined: false, notJoined: "fabric status N/A" }), "2 NOT JOINED: fabric status N/A"],
    [gpu({ joined: false }), "2 NOT JOINED: no reason reported"],
    [gpu({ domain: "00000002-0000-0000-0000-000000000002.0" }), "2 joined to 00000002-0000-0000-0000-000000000002.0"],
  ])("%#: %s", (g, want) => expect(gpuCell(g, DOMAIN)).toBe(want));
});
