// The console's transport and IMEX peer list pages on the console fleet (test/console/cluster.ts, real captures) with
// two more healthy trays: the node page's Transport column (a multi-node shard's verdict, a one-node shard's transport
// inside the node), a degraded replica on the deployments page under `transport: require` and `prefer`, and the
// rack's warnings beside a tray (IMEX nodes_config.cfg against the domain, shards whose transport is degraded).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transportText } from "../../api/console/transport.js";
import { upsertShardReports } from "../../api/db/shards.js";
import { imexConfigDigest } from "../../shared/imex-config.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";
import { fleet, gb200Tray, HGX_NODE, NVL_MODEL } from "./cluster.js";
import { get, login } from "./console.js";

const DOMAIN = "00000001-0000-0000-0000-000000000001.2";
const EXTRA = ["gb-tray-5", "gb-tray-6"];

type Shard = { shardId: string; nodeId: string; rank: number };
type Replica = { id: string; deployment: string; shards: Shard[] };

let t: TestApp;
let cookie: string;
const tokens: Record<string, string> = {};
const addrs: string[] = [];
let big: Replica;
let pref: Replica;
let solo: Replica;

const socket: ShardTransport = {
  verdict: "degraded",
  expected: `nvlink:${DOMAIN}`,
  via: "NET/Socket",
  observed: "NET/Socket on eth0 (NCCL 2.21.5)",
  reason: `placed on nvlink:${DOMAIN}; NCCL uses NET/Socket on eth0`,
};
const mnnvl: ShardTransport = {
  verdict: "ok",
  expected: `nvlink:${DOMAIN}`,
  via: "MNNVL",
  observed: "MNNVL (NCCL 2.21.5)",
};
const p2p: ShardTransport = {
  verdict: "local",
  expected: "single",
  via: "P2P",
  observed: "P2P, SHM inside the node (NCCL 2.21.5)",
};

/** Reports every shard of a replica ready, rank 1 with `rank1` and rank 0 with `rank0` as its transport. */
async function reportReady(r: Replica, rank0: ShardTransport, rank1?: ShardTransport) {
  for (const s of r.shards) {
    const transport = s.rank === 0 ? rank0 : rank1;
    await upsertShardReports(
      t.db,
      s.nodeId,
      [{ shardId: s.shardId, replicaId: r.id, state: "ready", ...(transport ? { transport } : {}) }],
      t.clock.now(),
    );
  }
}

beforeAll(async () => {
  t = await createTestApp();
  const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
  const extra = EXTRA.map((id, i) => ({ ...registerBody(id, gb200Tray(id, 5 + i)), labels: { pool: "prod" } }));
  for (const [i, body] of [...fleet(), ...extra].entries()) {
    const mgmtAddr = `10.0.0.${11 + i}`;
    const r = await t.call("POST", "/api/v1/agents/register", { token: join.json.token, body: { ...body, mgmtAddr } });
    if (r.status !== 201) throw new Error(`register ${body.nodeId}: ${r.text}`);
    tokens[body.nodeId] = r.json.nodeToken;
    if (body.nodeId !== HGX_NODE) addrs.push(mgmtAddr);
  }
  await t.admin("PUT", "/api/v1/models/llama-405b", { body: { spec: NVL_MODEL } });
  await t.admin("PUT", "/api/v1/models/llama-70b", {
    body: {
      spec: {
        weightsPath: "/m/70b",
        profiles: [{ name: "hgx", engine: "vllm", gpuClass: "h100-80g", tp: 8, gpusPerNode: 8 }],
      },
    },
  });
  for (const [name, model, transport] of [
    ["big", "llama-405b", "require"],
    ["pref", "llama-405b", "prefer"],
    ["solo", "llama-70b", undefined],
  ] as const)
    await t.admin("PUT", `/api/v1/deployments/${name}`, {
      body: {
        spec: { model, replicas: 1, pool: "prod", ...(transport ? { transport } : {}) },
      },
    });
  await t.settle();
  const items = (await t.admin("GET", "/api/v1/replicas")).json.items as Replica[];
  [big, pref, solo] = ["big", "pref", "solo"].map((d) => items.find((r) => r.deployment === d)!) as [
    Replica,
    Replica,
    Replica,
  ];
  // written straight to the store, as an agent's report would: nothing re-places the replicas before the pages are read
  await reportReady(big, mnnvl, socket);
  await reportReady(pref, mnnvl, socket);
  await reportReady(solo, p2p);
  cookie = (await login(t)).cookie;
});
afterAll(() => t.close());

const page = async (path: string) => {
  const r = await get(t, path, cookie);
  expect(r.status, path).toBe(200);
  return r.text;
};
const rank = (r: Replica, n: number) => r.shards.find((s) => s.rank === n)!;

describe("the node page's Transport column", () => {
  it("shows a multi-node shard's verdict: degraded in amber with the reason, ok with what NCCL uses", async () => {
    expect(big?.shards).toHaveLength(2);
    const degraded = await page(`/admin/nodes/${rank(big, 1).nodeId}`);
    expect(degraded).toContain('<th scope="col">transport</th>');
    expect(degraded).toContain(
      `<span title="placed on nvlink:${DOMAIN}"><span class="badge" data-state="degraded">degraded</span> <span class="warning">placed on nvlink:${DOMAIN}; NCCL uses NET/Socket on eth0</span></span>`,
    );
    const ok = await page(`/admin/nodes/${rank(big, 0).nodeId}`);
    expect(ok).toContain('<span class="badge" data-state="ok">ok</span> <span>MNNVL (NCCL 2.21.5)</span>');
  });

  it("shows what a one-node shard uses inside the node, with no verdict and no warning", async () => {
    const html = await page(`/admin/nodes/${HGX_NODE}`);
    expect(html).toContain('<span title="placed on single"><span>P2P, SHM inside the node (NCCL 2.21.5)</span></span>');
    expect(html).not.toContain('class="warning"');
  });
});

describe("the deployments page", () => {
  it("shows a degraded replica in amber with its shard's reason, and whether the router serves it", async () => {
    const html = await page("/admin/deployments");
    const row = (r: Replica) => new RegExp(`<tr id="replica-${r.id}">[\\s\\S]*?</tr>`).exec(html)![0];
    const reason = (r: Replica) =>
      `<span class="badge" data-state="degraded">degraded</span><div class="warning">${rank(r, 1).shardId}: ${socket.reason}</div>`;
    expect(row(big)).toContain(
      `${reason(big)}<div class="muted">not served; moved to other nodes where a set fits (transport: require)</div>`,
    );
    expect(row(pref)).toContain(`${reason(pref)}<div class="muted">served anyway (transport: prefer)</div>`);
    expect(row(solo)).toContain('<span class="badge" data-state="ready">ready</span></td>');
  });
});

describe("the rack's warnings beside a tray", () => {
  const notes = (html: string, node: string) =>
    new RegExp(`<ul class="tray-notes" aria-label="Warnings on ${node}">(.*?)</ul>`).exec(html)?.[1];

  it("names each shard on the tray whose transport is degraded", async () => {
    const html = await page("/admin/nvlink");
    const node = rank(big, 1).nodeId;
    expect(notes(html, node)).toContain(
      `<li>shard ${rank(big, 1).shardId} (replica ${big.id}) transport degraded: ${socket.reason}</li>`,
    );
    expect(notes(html, rank(big, 0).nodeId)).toBeUndefined();
  });

  it("warns when a tray's IMEX nodes_config.cfg is not the domain's nodes, and says nothing once it is", async () => {
    const tray = rank(big, 0).nodeId;
    const send = async (addresses: string[]) => {
      const imexConfig = { digest: await imexConfigDigest(addresses), addresses: addresses.length };
      const r = await t.call("POST", `/api/v1/agents/${tray}/heartbeat`, { token: tokens[tray], body: { imexConfig } });
      expect(r.status, r.text).toBe(200);
    };
    await send(addrs.slice(1));
    const short = await page("/admin/nvlink");
    expect(notes(short, tray)).toBe(
      `<li>IMEX nodes_config.cfg lists ${addrs.length - 1} addresses, not the ${addrs.length} nodes of this domain</li>`,
    );
    expect(short).toContain(`aria-label="Tray ${tray.slice(-1)} (${tray}): in"`);
    await send(addrs);
    expect(notes(await page("/admin/nvlink"), tray)).toBeUndefined();
  });
});

describe("transportText", () => {
  it("words every verdict: the badge, the text, and whether it warns", () => {
    const placed = { expected: "ib:fabric-a (mlx5_0,mlx5_1)" };
    const unverified = `placed on ${placed.expected}; no NCCL lines in the engine's log`;
    expect(
      [
        null,
        p2p,
        { ...placed, verdict: "ok", via: "NET/IB", observed: "NET/IB on mlx5_0, mlx5_1" },
        { ...placed, verdict: "degraded", via: "NET/Socket" },
        { ...placed, verdict: "pending" },
        { ...placed, verdict: "unverified", reason: unverified },
      ].map((x) => transportText(x as ShardTransport | null)),
    ).toEqual([
      null,
      { badge: null, text: "P2P, SHM inside the node (NCCL 2.21.5)", warn: false },
      { badge: "ok", text: "NET/IB on mlx5_0, mlx5_1", warn: false },
      { badge: "degraded", text: `placed on ${placed.expected}; NCCL uses NET/Socket`, warn: true },
      { badge: "pending", text: "NCCL has not said which transport it uses yet", warn: false },
      { badge: "unverified", text: unverified, warn: false },
    ]);
  });
});
