import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertShardReports } from "../../api/db/shards.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { DEGRADED_TRAY, fleet, HGX_NODE, NVL_MODEL, OUT_TRAY, TRAYS } from "./cluster.js";
import { csrfOf, get, login, post } from "./console.js";

let t: TestApp;
let cookie: string;
beforeAll(async () => {
  t = await createTestApp();
  const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
  for (const body of fleet()) {
    const r = await t.call("POST", "/api/v1/agents/register", { token: join.json.token, body });
    if (r.status !== 201) throw new Error(`register ${body.nodeId}: ${r.text}`);
  }
  await t.admin("PUT", "/api/v1/models/llama-405b", { body: { spec: NVL_MODEL } });
  await t.admin("PUT", "/api/v1/deployments/big", {
    body: { spec: { model: "llama-405b", replicas: 2, pool: "prod" } },
  });
  await t.admin("POST", `/api/v1/nodes/${HGX_NODE}/cordon`);
  await t.settle();
  cookie = (await login(t)).cookie;
});
afterAll(() => t.close());

const page = async (path: string) => {
  const r = await get(t, path, cookie);
  expect(r.status, path).toBe(200);
  return r.text;
};

describe("/admin/nvlink", () => {
  it("draws the domain as a rack: switch band, backplane, the four trays in tray order", async () => {
    const html = await page("/admin/nvlink");
    expect(html).toContain('aria-label="Rack of NVLink domain 00000001-0000-0000-0000-000000000001.2"');
    expect(html).toContain('<div class="switch-band" data-state="partial"><strong>NVLink Switch</strong>');
    expect(html).toContain("15 of 16 GPUs joined");
    expect(html).toContain(
      '<div class="backplane" data-state="in" aria-hidden="true"><span class="light"></span></div>',
    );
    const order = [
      ...html.matchAll(/<li class="tray" data-state="(\w+)" data-node="([\w-]+)" aria-label="([^"]+)"/g),
    ].map((m) => [m[2], m[1], m[3]]);
    expect(order).toEqual([
      [TRAYS[0], "in", `Tray 1 (${TRAYS[0]}): in`],
      [TRAYS[1], "in", `Tray 2 (${TRAYS[1]}): in`],
      [OUT_TRAY, "out", `Tray 3 (${OUT_TRAY}): out`],
      [DEGRADED_TRAY, "degraded", `Tray 4 (${DEGRADED_TRAY}): degraded`],
    ]);
  });

  it("names every GPU chip's state in words and in data-state", async () => {
    const html = await page("/admin/nvlink");
    const chips = [...html.matchAll(/<span class="chip" role="img" data-state="(\w+)" aria-label="([^"]+)"/g)].map(
      (m) => [m[1], m[2]],
    );
    expect(chips).toHaveLength(16);
    expect(chips.slice(8, 12)).toEqual([
      ["joined", "GPU 0: joined"],
      ["joined", "GPU 1: joined"],
      ["out", "GPU 2: not joined (fabric In Progress)"],
      ["joined", "GPU 3: joined"],
    ]);
    expect(chips[13]).toEqual([
      "degraded",
      "GPU 1: joined, degraded bandwidth (fabric health Limited Capacity, bandwidth Degraded)",
    ]);
  });

  it("says beside each tray what keeps it out, and why a degraded one is placed on last", async () => {
    const html = await page("/admin/nvlink");
    expect(html).toContain(
      `<ul aria-label="What keeps ${OUT_TRAY} out"><li>GPU 2 fabric In Progress</li><li>IMEX down</li></ul>`,
    );
    expect(html).toContain(
      `<ul aria-label="Why ${DEGRADED_TRAY} is degraded"><li>GPU 1 fabric health Limited Capacity, bandwidth Degraded (placed on last)</li></ul>`,
    );
    expect(html).toContain("3 of 4 trays can take multi-node shards");
  });

  it("lists a single-machine NVSwitch apart, with why it is no domain", async () => {
    const html = await page("/admin/nvlink");
    expect(html).toContain(`<a href="/admin/nodes/${HGX_NODE}">${HGX_NODE}</a>`);
    expect(html).toContain("single-machine NVSwitch (cluster UUID is zero)");
  });

  it("links the stylesheet whose animations stop for prefers-reduced-motion", async () => {
    const html = await page("/admin/nvlink");
    const href = /<link rel="stylesheet" href="([^"]+)"/.exec(html)![1]!;
    const css = (await get(t, href)).text;
    expect(css).toMatch(
      /@media \(prefers-reduced-motion: reduce\) \{\s*\*, \*::before, \*::after \{ animation: none !important;/,
    );
    expect(css).toContain("@keyframes pulse");
    expect(css).toContain("@keyframes flow");
  });
});

describe("/admin/nodes/:id", () => {
  it("shows the GPUs with class, memory, NUMA node, nearest adapter and fabric", async () => {
    const html = await page(`/admin/nodes/${OUT_TRAY}`);
    expect(html).toContain('GPU 2<div class="muted">NVIDIA GB200</div>');
    expect(html).toContain("gb200-185g");
    expect(html).toContain("185.0 GiB");
    expect(html).toContain("mlx5_0 (SYS)");
    expect(html).toContain('<span class="badge" data-state="out">not joined</span><div>fabric In Progress</div>');
  });

  it("draws the GPU-by-GPU NVLink matrix with NV# link counts", async () => {
    const html = await page(`/admin/nodes/${HGX_NODE}`);
    expect(html).toContain('<table class="matrix">');
    expect(html).toContain(
      '<td class="nv" title="GPU 0 to GPU 7: 18 NVLinks" aria-label="GPU 0 to GPU 7: 18 NVLinks">NV18</td>',
    );
    expect(html).toContain('<td class="self" aria-label="GPU 3: itself">X</td>');
    expect(html.match(/>NV18</g)).toHaveLength(56);
    expect(html).toContain('<span class="muted">no multi-node domain (single-machine NVSwitch)</span>');
  });

  it("shows domain eligibility with its reasons, IMEX, HCAs and ports", async () => {
    const html = await page(`/admin/nodes/${OUT_TRAY}`);
    expect(html).toContain('<a href="/admin/nvlink#domain-00000001-0000-0000-0000-000000000001.2">');
    expect(html).toContain("<li>GPU 2 fabric In Progress</li><li>IMEX down</li>");
    expect(html).toContain('<span class="badge" data-state="down">IMEX down</span>');
    expect(html).toContain('<span class="badge" data-state="ACTIVE">ACTIVE (LinkUp)</span>');
    expect(html).toContain("400 Gb/s");
    expect(html).toContain('<span class="muted">none named</span>');
    expect(await page(`/admin/nodes/${HGX_NODE}`)).toContain("<td>ib-east</td>");
    const healthy = await page(`/admin/nodes/${TRAYS[0]}`);
    expect(healthy).toContain('<span class="badge" data-state="in">eligible</span>');
    expect(healthy).toContain("IMEX ready, 1 channel");
  });

  it("shows the shards placed on the node", async () => {
    const html = await page(`/admin/nodes/${TRAYS[0]}`);
    expect(html).toMatch(/big \/ <span class="mono">r\d+<\/span>/);
    expect(html).toContain("nvlink:00000001-0000-0000-0000-000000000001.2");
  });

  it("asks before draining, naming the replicas, shards and GPUs on the node, and changes nothing yet", async () => {
    const csrf = csrfOf(await page(`/admin/nodes/${TRAYS[0]}`));
    const r = await post(t, `/admin/nodes/${TRAYS[0]}/drain`, { _csrf: csrf }, cookie);
    expect(r.status).toBe(200);
    expect(r.text).toContain(`<h1>Drain ${TRAYS[0]}?</h1>`);
    expect(r.text).toContain("These replicas move to other nodes");
    expect(r.text).toMatch(
      new RegExp(
        `replica <span class="mono">r\\d+</span> of big: shard <span class="mono">[\\w-]+</span> rank 0 on GPU 0, 1, 2, 3 .*\\(the replica also has shards on ${TRAYS[1]}\\)`,
      ),
    );
    expect((await t.admin("GET", `/api/v1/nodes/${TRAYS[0]}`)).json.adminState).toBe("ready");
  });

  it("escapes what agents report", async () => {
    const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
    const body = { ...fleet()[4]!, nodeId: "xss", hostname: "<script>alert(1)</script>", labels: { pool: "lab" } };
    await t.call("POST", "/api/v1/agents/register", { token: join.json.token, body });
    const html = await page("/admin/nodes/xss");
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    await t.admin("DELETE", "/api/v1/nodes/xss");
  });
});

describe("the other pages", () => {
  it("overview: nodes by state, devices by class, deployments and replicas, pending reasons, events", async () => {
    const html = await page("/admin");
    expect(html).toContain('<a href="/admin/nodes?state=ready" aria-label="4 ready">');
    expect(html).toContain('<a href="/admin/nodes?state=cordoned" aria-label="1 cordoned">');
    expect(html).toContain(
      '<th scope="row" class="mono">gb200-185g</th><td class="num">16</td><td class="num">8</td><td class="num">8</td><td class="num">0</td>',
    );
    expect(html).toContain("<li>8 × node cordoned</li>");
    expect(html).toMatch(
      /big<\/a>: 1 × needs 2 nodes with 4 free gb200-185g in one NVLink domain; domain [^<]* has 1 eligible: tray 3 GPU 2 fabric In Progress, tray 3 IMEX down/,
    );
    expect(html).toContain(`${HGX_NODE}: ready → cordoned`);
  });

  it("nodes: state, devices, NVLink and IMEX per node, filtered by state", async () => {
    const html = await page("/admin/nodes");
    expect(html).toContain('<span class="badge" data-state="out">3/4 joined</span>');
    expect(html).toContain('<span class="badge" data-state="degraded">4/4 joined</span>');
    expect(html).toContain("gb200-185g × 4");
    const cordoned = await page("/admin/nodes?state=cordoned");
    expect(cordoned).toContain(`/admin/nodes/${HGX_NODE}`);
    expect(cordoned).not.toContain(`/admin/nodes/${TRAYS[0]}`);
  });

  it("deployments: phase, counts and why pending; replicas with endpoint and shards", async () => {
    const html = await page("/admin/deployments");
    expect(html).toContain('<span class="badge" data-state="Pending">Pending</span>');
    expect(html).toMatch(/<li>1 × needs 2 nodes[^<]*<\/li>/);
    expect(html).toMatch(/<td class="mono">http:\/\/10\.0\.0\.11:\d+<\/td>/);
    expect(html).toContain(`<a href="/admin/nodes/${TRAYS[0]}">${TRAYS[0]}</a> rank 0`);
  });

  it("deployments and node pages: a shard's last failure, its log's last lines behind a disclosure", async () => {
    const [r] = (await t.admin("GET", "/api/v1/replicas?deployment=big")).json.items;
    const s = r.shards[0];
    const failure = {
      reason: "exit 1",
      exitCode: 1,
      ranS: 3,
      restart: 2,
      restartLimit: 5,
      gaveUp: false,
      logTail: ["loading", "<b>CUDA error</b>"],
      at: t.clock.now(),
    };
    await upsertShardReports(
      t.db,
      s.nodeId,
      [{ shardId: s.shardId, replicaId: r.id, state: "pending", failure }],
      t.clock.now(),
    );
    for (const path of ["/admin/deployments", `/admin/nodes/${s.nodeId}`]) {
      const html = await page(path);
      expect(html, path).toContain(
        "<summary>last failure: exit 1 after 3 s (restart 2 of 5): &lt;b&gt;CUDA error&lt;/b&gt;</summary>",
      );
      expect(html, path).toContain('<pre class="log">loading\n&lt;b&gt;CUDA error&lt;/b&gt;</pre>');
    }
    await upsertShardReports(t.db, s.nodeId, [{ shardId: s.shardId, replicaId: r.id, state: "ready" }], t.clock.now());
    expect(await page("/admin/deployments")).not.toContain("last failure:");
  });

  it("plan: devices by class and what more fits", async () => {
    const html = await page("/admin/plan");
    expect(html).toContain(
      '<th scope="row">llama-405b</th><td>nvl-2x4</td><td class="mono">gb200-185g</td><td>prod</td>',
    );
    expect(html).toContain(
      '<span class="badge" data-state="none" title="none fits">0</span></td><td>needs 2 nodes with 4 free gb200-185g in one NVLink domain',
    );
  });

  it("marks the current page in the nav and carries the refresh script", async () => {
    const html = await page("/admin/plan");
    expect(html).toContain('<a href="/admin/plan" aria-current="page">Plan</a>');
    expect(html).toMatch(/<script src="\/admin\/static\/console\.js\?v=\w+" defer=""><\/script>/);
    expect(html).toContain('<body data-refresh-s="10">');
  });
});
