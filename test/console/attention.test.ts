import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployments, nodes } from "../../api/db/schema.js";
import { upsertShardReports } from "../../api/db/shards.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";
import { DEGRADED_TRAY, fleet, HGX_NODE, NVL_MODEL, OUT_TRAY, TRAYS } from "./cluster.js";
import { get, login } from "./console.js";

const DOMAIN = "00000001-0000-0000-0000-000000000001.2";

let t: TestApp;
let cookie: string;
let join: string;
beforeAll(async () => {
  t = await createTestApp();
  join = (await t.admin("POST", "/api/v1/join-tokens", { body: {} })).json.token;
  cookie = (await login(t)).cookie;
});
afterAll(() => t.close());

const register = async (body: ReturnType<typeof registerBody>) => {
  const r = await t.call("POST", "/api/v1/agents/register", { token: join, body });
  if (r.status !== 201) throw new Error(`register ${body.nodeId}: ${r.text}`);
};

/** The "Needs attention" items of the overview, as text with tags stripped, each with its link. */
async function attention() {
  const html = (await get(t, "/admin", cookie)).text;
  const section = /<section aria-labelledby="h-attention"[\s\S]*?<\/section>/.exec(html)![0];
  const items = [...section.matchAll(/<li data-severity="(\w+)"><a href="([^"]+)">([\s\S]*?)<\/li>/g)].map((m) => ({
    severity: m[1],
    href: m[2],
    text: m[3]!.replace(/<[^>]+>/g, "").replace(/&#39;/g, "'"),
  }));
  return { html, section, items };
}

describe("the overview's Needs attention", () => {
  it("says plainly when nothing is wrong", async () => {
    await register(fleet().find((b) => b.nodeId === HGX_NODE)!);
    const { section, items } = await attention();
    expect(items).toEqual([]);
    expect(section).toContain("Nothing is wrong now");
  });

  it("lists the tray out of its domain with why, and the degraded one, though every node is ready", async () => {
    for (const body of fleet().filter((b) => b.nodeId !== HGX_NODE)) await register(body);
    const { html, items } = await attention();
    expect(html).toContain('<a href="/admin/nodes?state=ready" aria-label="5 ready">');
    expect(html).toContain("3 of 4 in their domain");
    expect(html).toContain(", 1 out (whatever their state above)");
    expect(html.indexOf('id="h-attention"')).toBeLessThan(html.indexOf('id="h-nodes"'));
    const rack = `/admin/nvlink#domain-${DOMAIN}`;
    expect(items).toEqual([
      {
        severity: "bad",
        href: rack,
        text: `Tray 3 (${OUT_TRAY}) is out of NVLink domain ${DOMAIN}: GPU 2 fabric In Progress, IMEX down`,
      },
      {
        severity: "warn",
        href: rack,
        text: `Tray 4 (${DEGRADED_TRAY}) is degraded, placed on last: GPU 1 fabric health Limited Capacity, bandwidth Degraded`,
      },
    ]);
  });

  it("lists InfiniBand ports down and discovery errors, each linking to the node", async () => {
    const inv = nodeInventory("ib-bad");
    await register(
      registerBody("ib-bad", {
        ...inv,
        hcas: [{ name: "mlx5_3", ports: [{ port: 1, state: "DOWN", physState: "Disabled" }] }],
        errors: [{ source: "ibstat", message: "timed out after 5 s" }],
      }),
    );
    const { items } = await attention();
    expect(items.slice(2)).toEqual([
      { severity: "bad", href: "/admin/nodes/ib-bad", text: "ib-bad InfiniBand ports not active: mlx5_3 port 1 DOWN" },
      {
        severity: "warn",
        href: "/admin/nodes/ib-bad",
        text: "ib-bad discovery error from ibstat: timed out after 5 s",
      },
    ]);
    await t.admin("DELETE", "/api/v1/nodes/ib-bad");
  });

  it("flags shards still on a tray that goes out, here and on the rack view", async () => {
    await t.admin("PUT", "/api/v1/models/llama-405b", { body: { spec: NVL_MODEL } });
    await t.admin("PUT", "/api/v1/deployments/big", {
      body: { spec: { model: "llama-405b", replicas: 1, pool: "prod" } },
    });
    await t.settle();
    const [r] = (await t.admin("GET", "/api/v1/replicas?deployment=big")).json.items;
    const s = r.shards.find((x: { rank: number }) => x.rank === 0);
    await t.admin("POST", `/api/v1/nodes/${s.nodeId}/cordon`);
    const { items } = await attention();
    expect(items).toContainEqual({
      severity: "bad",
      href: `/admin/nodes/${s.nodeId}`,
      text: `Shard ${s.shardId} of big (replica ${r.id}, rank 0) is unknown on ${s.nodeId}, a tray that is out`,
    });
    const rack = (await get(t, "/admin/nvlink", cookie)).text;
    expect(rack).toContain(`<tr data-state="out"><th scope="row" class="mono">${r.id}</th>`);
    expect(rack).toContain("still on a tray that is out");
    await t.admin("POST", `/api/v1/nodes/${s.nodeId}/uncordon`);
    // the placement the uncordon started ends before the next test writes to the database directly
    await t.settle();
  });

  it("lists a failed replica with the node and GPUs of its failed shard, and a Failed deployment", async () => {
    const [r] = (await t.admin("GET", "/api/v1/replicas?deployment=big")).json.items;
    const s = r.shards[0];
    const failure = {
      reason: "exit 1",
      exitCode: 1,
      ranS: 3,
      restart: 5,
      restartLimit: 5,
      gaveUp: true,
      logTail: [],
      at: t.clock.now(),
    };
    await upsertShardReports(
      t.db,
      s.nodeId,
      [{ shardId: s.shardId, replicaId: r.id, state: "failed", failure }],
      t.clock.now(),
    );
    const failing = { count: 2, reason: "exit 1", since: t.clock.now(), retryAt: t.clock.now() + 60_000 };
    await t.db.update(deployments).set({ failing }).where(eq(deployments.name, "big"));
    const { items } = await attention();
    expect(items).toContainEqual({
      severity: "bad",
      href: "/admin/deployments",
      text: expect.stringMatching(/^big Failed: failed 2 times in a row past the restart limit \(last: exit 1\)/),
    });
    expect(items).toContainEqual({
      severity: "bad",
      href: `/admin/deployments#replica-${r.id}`,
      text: expect.stringMatching(
        new RegExp(
          `^Replica ${r.id} of big failed: rank ${s.rank} on ${s.nodeId} GPU ${s.devices.join(", ")} \\(exit 1`,
        ),
      ),
    });
    const deploymentsPage = (await get(t, "/admin/deployments", cookie)).text;
    expect(deploymentsPage).toContain(`<tr id="replica-${r.id}">`);
  });

  it("lists a degraded replica with the shard off its fabric, and a tray whose IMEX peer list differs", async () => {
    await t.settle();
    await t.db.update(deployments).set({ failing: null }).where(eq(deployments.name, "big"));
    const [r] = (await t.admin("GET", "/api/v1/replicas?deployment=big")).json.items;
    const [a, b] = r.shards;
    const reason = `placed on ${b.fabric}; NCCL uses NET/IB on mlx5_0 (MNNVL 0)`;
    await upsertShardReports(t.db, a.nodeId, [{ shardId: a.shardId, replicaId: r.id, state: "ready" }], t.clock.now());
    await upsertShardReports(
      t.db,
      b.nodeId,
      [
        {
          shardId: b.shardId,
          replicaId: r.id,
          state: "ready",
          transport: { verdict: "degraded", expected: b.fabric, via: "NET/IB", reason },
        },
      ],
      t.clock.now(),
    );
    await t.db
      .update(nodes)
      .set({ imexConfigDigest: "0".repeat(64), imexConfigAddresses: 2 })
      .where(eq(nodes.id, TRAYS[0]!));
    const { items } = await attention();
    expect(items).toContainEqual({
      severity: "warn",
      href: `/admin/deployments#replica-${r.id}`,
      text: `Replica ${r.id} of big is degraded: rank ${b.rank} on ${b.nodeId}: ${reason}`,
    });
    expect(items).toContainEqual({
      severity: "warn",
      href: `/admin/nvlink#domain-${DOMAIN}`,
      text: expect.stringMatching(new RegExp(`^Tray \\d+ \\(${TRAYS[0]}\\) IMEX nodes_config\\.cfg lists 2 addresses`)),
    });
  });

  it("lists nodes whose heartbeat is late, then lost, with when they were last heard from in UTC", async () => {
    t.clock.advance(150_000);
    let { items } = await attention();
    expect(items).toContainEqual({
      severity: "warn",
      href: `/admin/nodes/${TRAYS[0]}`,
      text: `${TRAYS[0]} heartbeat late: last heard from 3 min ago`,
    });
    t.clock.advance(60_000);
    ({ items } = await attention());
    expect(items).toContainEqual({
      severity: "bad",
      href: `/admin/nodes/${HGX_NODE}`,
      text: `${HGX_NODE} lost: last heard from 4 min ago`,
    });
    const { html } = await attention();
    expect(html).toMatch(
      /<time datetime="2026-11-30T12:00:00\.\d{3}Z" title="2026-11-30 12:00:00 UTC">4 min ago<\/time>/,
    );
  });
});
