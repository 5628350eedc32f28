// The default demo scenario placed as docs/demo.md says, without starting the cluster: each node's inventory discovered
// the way its agent would (its agent.yaml, the fake nvidia-smi on its captures), registered with an in-process API,
// the scenario's models declared, and placement run. `llmgw demo` itself runs for real in demo.test.ts (a small
// scenario) and package.test.ts (this scenario, from the installed package).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgentConfig } from "../../agent/config.js";
import { runnerWith } from "../../agent/discovery/exec.js";
import { discover } from "../../agent/discovery/index.js";
import { discoverOptions } from "../../agent/runtime.js";
import { writeAgentConfig } from "../../agent/sim/cluster.js";
import { agentSettings, DEFAULT_SCENARIO, loadScenario, writeNode } from "../../agent/sim/scenario.js";
import { simDeclarations } from "../../agent/sim/start.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { tempDir } from "../helpers/db.js";

const tmp = tempDir();
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  const scenario = loadScenario(DEFAULT_SCENARIO);
  const joinToken = (await t.admin("POST", "/api/v1/join-tokens", { body: { name: "demo" } })).json.token as string;
  let port = 20000;
  for (const n of scenario.nodes) {
    writeNode(tmp.dir, n, scenario);
    const sim = agentSettings(tmp.dir, n);
    const { config } = writeAgentConfig({
      nodeId: n.id,
      server: "http://127.0.0.1:1",
      joinToken,
      dir: tmp.dir,
      ports: [port, port + 9],
      extra: sim.extra,
    });
    port += 10;
    const cfg = await loadAgentConfig(config);
    const inventory = await discover({ ...discoverOptions(cfg), run: runnerWith(sim.env) });
    // every node of the demo discovers cleanly: no red "Discovery errors" in the console
    expect(inventory.errors, n.id).toEqual([]);
    const body = {
      nodeId: n.id,
      hostname: n.id,
      mgmtAddr: "127.0.0.1",
      agentVersion: "0.1.0",
      labels: cfg.labels,
      portRange: cfg.portRange,
      inventory,
      runningShards: [],
    };
    const reg = await t.call("POST", "/api/v1/agents/register", { token: joinToken, body });
    expect(reg.status, JSON.stringify(reg.json)).toBe(201);
  }
  for (const m of scenario.models) {
    const d = simDeclarations(m, []);
    expect((await t.admin("PUT", `/api/v1/models/${m.name}`, { body: d.model })).status).toBe(201);
    expect((await t.admin("PUT", `/api/v1/deployments/${m.name}`, { body: d.deployment })).status).toBe(201);
  }
  await t.settle();
}, 60_000);
afterAll(async () => {
  await t.close();
  tmp.cleanup();
});

describe("the default demo scenario", () => {
  it("has six GB200 trays in one NVLink domain, the sixth out of it while GPU 3 joins", async () => {
    const trays = (await t.admin("GET", "/api/v1/nvlink")).json.domains[0].trays as {
      node: string;
      eligible: boolean;
      reasons: string[];
    }[];
    expect(trays.map((x) => [x.node, x.eligible])).toEqual([1, 2, 3, 4, 5, 6].map((i) => [`gb-tray-${i}`, i !== 6]));
    expect(trays[5]!.reasons).toEqual(["GPU 3 fabric In Progress"]);
  });

  it("shows tray 5 amber: its GPU 1's NVLink bandwidth is degraded, the domain still eligible but chosen last", async () => {
    const domain = (await t.admin("GET", "/api/v1/nvlink")).json.domains[0] as {
      degraded: boolean;
      trays: { node: string; eligible: boolean; degraded: boolean }[];
    };
    expect(domain.degraded).toBe(true);
    expect(domain.trays.filter((x) => x.degraded).map((x) => [x.node, x.eligible])).toEqual([["gb-tray-5", true]]);
  });

  it("places each model where docs/demo.md says: TP=8 on the HGX board, two trays over NVLink, MIG instances, two L40S over InfiniBand", async () => {
    const replicas = (await t.admin("GET", "/api/v1/replicas")).json.items as {
      deployment: string;
      shards: { nodeId: string; fabric: string; devices: string[] }[];
    }[];
    const where = (d: string) =>
      replicas
        .filter((x) => x.deployment === d)
        .map((x) => x.shards.map((s) => `${s.nodeId}:${s.fabric.split(":")[0]}:${s.devices.length}`).join(" "));
    expect(where("demo-chat")).toEqual(["hgx-h100-1:single:8"]);
    expect(where("demo-nvl")).toEqual([expect.stringMatching(/^gb-tray-[1-5]:nvlink:4 gb-tray-[1-5]:nvlink:4$/)]);
    expect(where("demo-mig")).toEqual(["a100-mig-1:single:1", "a100-mig-1:single:1"]);
    expect(where("demo-ib")).toEqual([expect.stringMatching(/^l40s-[12]:ib:1 l40s-[12]:ib:1$/)]);
  });
});
