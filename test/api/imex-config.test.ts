// The heartbeat's imexConfig as the control plane keeps and shows it: stored per node without touching placement (no
// change index, no new generation), and compared in GET /api/v1/nvlink with the addresses of every node of the domain;
// and each shard's reported transport in GET /api/v1/nodes/{id}. Trays are copies of the real GB200 capture.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readGeneration } from "../../api/db/cluster.js";
import { nodes } from "../../api/db/schema.js";
import { imexConfigDigest } from "../../shared/imex-config.js";
import type { NvlinkTray, NvlinkView } from "../../shared/schemas/nvlink.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { GB200_XML, nodeInventory, registerBody } from "../helpers/inventory.js";

const ADDRS = { "gb-a": "10.0.0.11", "gb-b": "10.0.0.12", "gb-c": "10.0.0.13" } as const;
type Id = keyof typeof ADDRS;

let t: TestApp;
const tokens = {} as Record<Id, string>;

beforeAll(async () => {
  t = await createTestApp();
  for (const [id, mgmtAddr] of Object.entries(ADDRS) as [Id, string][]) {
    const join = (await t.admin("POST", "/api/v1/join-tokens", { body: {} })).json.token as string;
    const inventory = { ...nodeInventory(id, GB200_XML), imex: { state: "ready" as const, channels: 1 } };
    const r = await t.call("POST", "/api/v1/agents/register", {
      token: join,
      body: { ...registerBody(id, inventory), mgmtAddr },
    });
    expect(r.status, r.text).toBe(201);
    tokens[id] = r.json.nodeToken;
  }
});
afterAll(() => t.close());

const heartbeat = (id: Id, body: object) =>
  t.call("POST", `/api/v1/agents/${id}/heartbeat`, { token: tokens[id], body });
const summary = async (addresses: string[]) => ({
  digest: await imexConfigDigest(addresses),
  addresses: addresses.length,
});
const tray = async (id: Id): Promise<NvlinkTray> => {
  const v = (await t.admin("GET", "/api/v1/nvlink")).json as NvlinkView;
  return v.domains[0]!.trays.find((x) => x.node === id)!;
};
const row = async (id: Id) => (await t.db.select().from(nodes).where(eq(nodes.id, id)))[0]!;

describe("the heartbeat's imexConfig", () => {
  it("is stored with the node, and neither stamps its change index nor bumps the placement generation", async () => {
    const [gen, rev] = [await readGeneration(t.db), (await row("gb-a")).rev];
    const r = await heartbeat("gb-a", { imexConfig: await summary(Object.values(ADDRS)) });
    expect(r.status, r.text).toBe(200);
    const after = await row("gb-a");
    expect([after.imexConfigDigest, after.imexConfigAddresses]).toEqual([
      await imexConfigDigest(Object.values(ADDRS)),
      3,
    ]);
    expect(after.rev).toBe(rev);
    expect(await readGeneration(t.db)).toBe(gen);
    // a changed list is no placement fact either
    await heartbeat("gb-a", { imexConfig: await summary(["10.0.0.11"]) });
    expect((await row("gb-a")).imexConfigAddresses).toBe(1);
    expect(await readGeneration(t.db)).toBe(gen);
  });

  it("is cleared by a heartbeat that sends none (the file is gone)", async () => {
    await heartbeat("gb-b", { imexConfig: await summary(Object.values(ADDRS)) });
    await heartbeat("gb-b", {});
    expect((await row("gb-b")).imexConfigDigest).toBeNull();
    expect((await tray("gb-b")).imexConfig).toBeNull();
  });
});

describe("GET /api/v1/nvlink: each tray's IMEX peer list against its domain", () => {
  it("matches when it lists every node of the domain, in any order", async () => {
    await heartbeat("gb-c", { imexConfig: await summary(["10.0.0.13", "10.0.0.11", "10.0.0.12"]) });
    expect((await tray("gb-c")).imexConfig).toEqual({ addresses: 3, matches: true, warning: null });
  });

  it("warns in words when it lists fewer addresses, or other ones, and keeps the tray eligible", async () => {
    await heartbeat("gb-c", { imexConfig: await summary(["10.0.0.11", "10.0.0.12"]) });
    const short = await tray("gb-c");
    expect(short.imexConfig).toEqual({
      addresses: 2,
      matches: false,
      warning: "IMEX nodes_config.cfg lists 2 addresses, not the 3 nodes of this domain",
    });
    expect(short).toMatchObject({ eligible: true, reasons: [] });
    await heartbeat("gb-c", { imexConfig: await summary(["10.0.0.11", "10.0.0.12", "10.0.0.99"]) });
    expect((await tray("gb-c")).imexConfig).toEqual({
      addresses: 3,
      matches: false,
      warning: "IMEX nodes_config.cfg lists 3 addresses, not those of the 3 nodes of this domain",
    });
  });

  it("is null for a node that sent none", async () => {
    expect((await tray("gb-b")).imexConfig).toBeNull();
  });

  it("describes the field in the OpenAPI document", async () => {
    const doc = (await t.call("GET", "/openapi.json")).json;
    expect(doc.components.schemas.NvlinkImexConfig.properties.warning.example).toBe(
      "IMEX nodes_config.cfg lists 17 addresses, not the 18 nodes of this domain",
    );
    expect(doc.components.schemas.NvlinkTray.properties.degradedShards.description).toMatch(/transport/);
  });
});

describe("GET /api/v1/nodes/{id}: each shard's transport", () => {
  const degraded: ShardTransport = {
    verdict: "degraded",
    expected: "ib:fabric-a (mlx5_0,mlx5_1)",
    via: "NET/Socket",
    observed: "NET/Socket on eth0 (NCCL 2.21.5)",
    reason: "placed on ib:fabric-a (mlx5_0,mlx5_1); NCCL uses NET/Socket on eth0",
  };

  it("is what the agent last reported, or null when it reported none", async () => {
    const r = await t.call("POST", "/api/v1/agents/gb-a/status", {
      token: tokens["gb-a"],
      body: {
        shards: [
          { shardId: "r1-s0", replicaId: "r1", state: "ready", transport: degraded },
          { shardId: "r2-s0", replicaId: "r2", state: "loading" },
        ],
      },
    });
    expect(r.status, r.text).toBe(200);
    const node = (await t.admin("GET", "/api/v1/nodes/gb-a")).json;
    expect(node.shards.map((s: { shardId: string; transport: unknown }) => [s.shardId, s.transport])).toEqual([
      ["r1-s0", degraded],
      ["r2-s0", null],
    ]);
    const doc = (await t.call("GET", "/openapi.json")).json;
    expect(JSON.stringify(doc.components.schemas.ShardStatus.properties.transport)).toContain(
      "what the shard's NCCL reported using",
    );
  });
});
