// GET /api/v1/nvlink on a crafted fleet registered through the API (test/helpers/nvlink-fleet.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readClusterFigures } from "../../api/metrics/cluster-figures.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import type { NvlinkView } from "../../shared/schemas/nvlink.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { DOMAIN, declareNvlinkDeployment, registerFleet } from "../helpers/nvlink-fleet.js";

let t: TestApp;
let tokens: Record<string, string>;
const view = async () => (await t.admin("GET", "/api/v1/nvlink")).json as NvlinkView;
const tray = (v: NvlinkView, node: string) => v.domains[0]!.trays.find((x) => x.node === node)!;

beforeAll(async () => {
  t = await createTestApp();
  tokens = await registerFleet(t.call, t.adminToken);
  await declareNvlinkDeployment(t.call, t.adminToken);
  await t.settle();
});
afterAll(() => t.close());

describe("GET /api/v1/nvlink", () => {
  it("is for admins: no token 401, a node token 403", async () => {
    expect((await t.call("GET", "/api/v1/nvlink")).status).toBe(401);
    const r = await t.call("GET", "/api/v1/nvlink", { token: tokens["gb-tray-a"] });
    expect(r.status).toBe(403);
    expect(r.json.code).toBe("forbidden");
  });

  it("shows the one domain with its trays in tray order, whatever the registration order", async () => {
    const v = await view();
    expect(v.domains.map((d) => ({ key: d.key, clusterUuid: d.clusterUuid, cliqueId: d.cliqueId }))).toEqual([
      { key: DOMAIN, clusterUuid: "00000001-0000-0000-0000-000000000001", cliqueId: "2" },
    ]);
    const d = v.domains[0]!;
    expect(d.trays.map((x) => [x.node, x.trayIndex, x.slotNumber])).toEqual([
      ["gb-tray-a", 1, 11],
      ["gb-tray-b", 2, 12],
      ["gb-tray-c", 3, 13],
      ["gb-tray-d", 4, 14],
    ]);
    expect(d.trays[0]!.chassisSerial).toBe("1820000000001");
    expect(d.trays.every((x) => x.hostname === `${x.node}.lab` && x.state === "ready" && x.total === 4)).toBe(true);
  });

  it("names exactly the reasons that keep each tray out, and nothing else", async () => {
    const d = (await view()).domains[0]!;
    expect(
      Object.fromEntries(
        d.trays.map((x) => [
          x.node,
          { eligible: x.eligible, reasons: x.reasons, degraded: x.degraded, warnings: x.warnings },
        ]),
      ),
    ).toEqual({
      "gb-tray-a": { eligible: true, reasons: [], degraded: false, warnings: [] },
      "gb-tray-b": { eligible: false, reasons: ["GPU 2 fabric In Progress"], degraded: false, warnings: [] },
      "gb-tray-c": {
        eligible: true,
        reasons: [],
        degraded: true,
        warnings: ["GPU 2 fabric health Limited Capacity, bandwidth Degraded"],
      },
      "gb-tray-d": { eligible: false, reasons: ["IMEX down"], degraded: false, warnings: [] },
    });
    expect(d.eligibleTrays).toBe(2);
    expect(d.degraded).toBe(true);
  });

  it("shows each GPU joined or why not, with its fabric as reported, and each tray's IMEX", async () => {
    const d = (await view()).domains[0]!;
    const b = tray({ domains: [d], standalone: [], noFabric: [] }, "gb-tray-b");
    expect(b.gpus.map((g) => [g.index, g.joined, g.notJoined, g.domain])).toEqual([
      [0, true, null, DOMAIN],
      [1, true, null, DOMAIN],
      [2, false, "fabric In Progress", DOMAIN],
      [3, true, null, DOMAIN],
    ]);
    expect(b.joined).toBe(3);
    expect(b.gpus[2]!.fabric).toMatchObject({ state: "In Progress", status: "N/A", cliqueId: "2" });
    expect(b.gpus.map((g) => g.module)).toEqual([2, 1, 4, 3]);
    const c = tray({ domains: [d], standalone: [], noFabric: [] }, "gb-tray-c");
    expect(c.gpus.map((g) => g.degraded)).toEqual([false, false, true, false]);
    expect(c.gpus[2]!.fabric!.health).toMatchObject({ summary: "Limited Capacity", bandwidth: "Degraded" });
    expect(c.fabricHealth).toBe("Limited Capacity");
    expect(d.trays.map((x) => [x.imex.state, x.imex.channels])).toEqual([
      ["ready", 1],
      ["ready", 1],
      ["ready", 1],
      ["down", 0],
    ]);
    expect(d.trays.flatMap((x) => x.gpus).every((g) => g.class === "gb200-185g")).toBe(true);
  });

  it("lists the HGX board apart (its NVSwitch is not a domain) and the MIG node as having no fabric", async () => {
    const v = await view();
    expect(v.standalone.map((s) => [s.node, s.reason])).toEqual([
      ["hgx-01", "single-machine NVSwitch (cluster UUID is zero): not a multi-node NVLink domain"],
    ]);
    const hgx = v.standalone[0]!;
    expect(hgx.gpus).toHaveLength(8);
    expect(new Set(hgx.gpus.map((g) => `${g.joined} ${g.domain} ${g.notJoined}`))).toEqual(
      new Set(["false null not in a multi-node NVLink domain (cluster UUID is zero)"]),
    );
    expect(v.noFabric).toEqual(["mig-01"]);
  });

  it("shows the shards placed in the domain: the two eligible trays, the healthy one first", async () => {
    const d = (await view()).domains[0]!;
    expect(
      d.shards.map((s) => ({ node: s.node, rank: s.rank, deployment: s.deployment, fabric: s.fabric, state: s.state })),
    ).toEqual([
      { node: "gb-tray-a", rank: 0, deployment: "big", fabric: `nvlink:${DOMAIN}`, state: "unknown" },
      { node: "gb-tray-c", rank: 1, deployment: "big", fabric: `nvlink:${DOMAIN}`, state: "unknown" },
    ]);
    expect(new Set(d.shards.map((s) => s.replicaId)).size).toBe(1);
    const replicas = (await t.admin("GET", "/api/v1/replicas")).json.items;
    expect(d.shards.map((s) => s.shardId)).toEqual(replicas[0].shards.map((s: { shardId: string }) => s.shardId));
    await t.call("POST", "/api/v1/agents/gb-tray-a/status", {
      token: tokens["gb-tray-a"],
      body: { shards: [{ shardId: d.shards[0]!.shardId, replicaId: d.shards[0]!.replicaId, state: "ready" }] },
    });
    expect((await view()).domains[0]!.shards.map((s) => s.state)).toEqual(["ready", "unknown"]);
  });

  it("adds the node's state to the reasons: cordoned, then lost", async () => {
    await t.admin("POST", "/api/v1/nodes/gb-tray-a/cordon");
    expect(tray(await view(), "gb-tray-a")).toMatchObject({
      state: "cordoned",
      eligible: false,
      reasons: ["node cordoned"],
    });
    await t.admin("POST", "/api/v1/nodes/gb-tray-a/uncordon");
    expect(tray(await view(), "gb-tray-a")).toMatchObject({ state: "ready", eligible: true, reasons: [] });
    t.clock.advance(181_000);
    const v = await view();
    expect(tray(v, "gb-tray-a").reasons).toEqual(["node lost"]);
    expect(tray(v, "gb-tray-b").reasons).toEqual(["node lost", "GPU 2 fabric In Progress"]);
    expect(v.domains[0]!.eligibleTrays).toBe(0);
    expect(v.standalone[0]!.state).toBe("lost");
    t.clock.advance(-181_000);
  });

  it("shows a fabric manager restart within one heartbeat: every card In Progress, every one named", async () => {
    const uuids = (await t.admin("GET", "/api/v1/nodes/gb-tray-a")).json.inventory.gpus.map(
      (g: { uuid: string; fabric: object }) => ({
        uuid: g.uuid,
        fabric: { ...g.fabric, state: "In Progress", status: "N/A" },
      }),
    );
    expect(
      (
        await t.call("POST", "/api/v1/agents/gb-tray-a/heartbeat", {
          token: tokens["gb-tray-a"],
          body: { gpus: uuids },
        })
      ).status,
    ).toBe(200);
    const a = tray(await view(), "gb-tray-a");
    expect(a.reasons).toEqual([0, 1, 2, 3].map((i) => `GPU ${i} fabric In Progress`));
    expect(a.joined).toBe(0);
  });

  it("keeps a tray in its rack, out and red, when a restart blanks its cards' cluster UUID and clique; its gauges go to 0", async () => {
    const inventory = (await t.admin("GET", "/api/v1/nodes/gb-tray-b")).json.inventory;
    const blank = inventory.gpus.map((g: { uuid: string }) => ({
      uuid: g.uuid,
      fabric: { state: "In Progress", status: "N/A" },
    }));
    const hb = await t.call("POST", "/api/v1/agents/gb-tray-b/heartbeat", {
      token: tokens["gb-tray-b"],
      body: { gpus: blank },
    });
    expect(hb.status).toBe(200);
    const v = await view();
    const b = tray(v, "gb-tray-b");
    expect(b).toMatchObject({ eligible: false, joined: 0 });
    expect(b.reasons).toEqual([0, 1, 2, 3].map((i) => `GPU ${i} fabric In Progress`));
    expect(v.standalone.map((s) => s.node)).not.toContain("gb-tray-b");
    const figures = await readClusterFigures(t.db, t.clock.now(), 180, newPlacementCache(), new Map());
    expect(figures.gpuNvlinkJoined.filter((s) => s.labels.node === "gb-tray-b")).toEqual(
      [0, 1, 2, 3].map((gpu) => ({ labels: { node: "gb-tray-b", gpu: String(gpu), domain: DOMAIN }, value: 0 })),
    );
  });

  it("pretty-prints with ?pretty, and the JSON is the same", async () => {
    const plain = await t.admin("GET", "/api/v1/nvlink");
    const pretty = await t.admin("GET", "/api/v1/nvlink?pretty");
    expect(pretty.status).toBe(200);
    expect(pretty.text).toContain('\n  "domains": [');
    expect(plain.text).not.toContain("\n");
    expect(pretty.json).toEqual(plain.json);
  });
});
