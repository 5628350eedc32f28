// The nginx site docs/deploy.md gives, run in front of a real `llmgw serve`: ctl works through it, an agent's parked
// long-poll is answered by the server (not cut by the proxy), and a streamed chat completion arrives as SSE.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { freePort, killAll, ROOT, runLlmgw, start, until } from "../helpers/process.js";
import { SIM_ADMIN, type SimCluster, startSimCluster } from "../helpers/sim.js";

const nginx = spawnSync("nginx", ["-v"]);
const haveNginx = !nginx.error && nginx.status === 0;
// CI installs nginx (.ci/run): there a missing nginx is a failure, not a skip.
const skip = !haveNginx && !process.env.CI;
if (skip) console.warn("reverse-proxy.test.ts: nginx is not installed (apt-get install -y nginx); not run");

const tmp = tempDir();
let c: SimCluster;
let proxyUrl = "";

/** The nginx site of docs/deploy.md, pointed at `upstream` and listening on plain HTTP at `port`, in a whole nginx.conf. */
function siteConf(upstream: string, port: number): string {
  const doc = readFileSync(join(ROOT, "docs", "deploy.md"), "utf8");
  const site = /```nginx\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!site) throw new Error("docs/deploy.md has no nginx block");
  const pointed = site
    .replace("server 127.0.0.1:8080;", `server ${upstream};`)
    .replace(/listen 443 ssl;/, `listen 127.0.0.1:${port};`);
  const dir = join(tmp.dir, "nginx");
  for (const d of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, d), { recursive: true });
  return `master_process off;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
${pointed}
}
`;
}

beforeAll(async () => {
  if (skip) return;
  c = await startSimCluster({
    dir: tmp.dir,
    scenario: "nodes:\n  - { id: l40s-p, kind: l40s, uuid_prefix: 'd0e0' }\n",
    // a stream that lasts about a second: a buffering proxy would hand it over only at its end
    engineArgs: ["--tokens-per-s", "10"],
  });
  await c.deploy({ name: "m", replicas: 1, gpu_class: "l40s-45g", about: "" });
  await c.ready("m");
  const port = await freePort();
  const conf = join(tmp.dir, "nginx.conf");
  writeFileSync(conf, siteConf(new URL(c.url).host, port));
  start("nginx", ["-c", conf, "-g", "daemon off;"]);
  proxyUrl = `http://127.0.0.1:${port}`;
  await until(async () => (await fetch(`${proxyUrl}/healthz`).catch(() => undefined))?.ok === true, 10_000, "nginx");
}, 90_000);
afterAll(async () => {
  await c?.close();
  await killAll();
  tmp.cleanup();
});

describe.skipIf(skip)("behind the nginx site of docs/deploy.md", () => {
  it("passes ctl, a parked long-poll and a streamed chat completion", async () => {
    const nodes = await runLlmgw(["ctl", "--server", proxyUrl, "nodes"], { env: { LLMGW_TOKEN: SIM_ADMIN } });
    expect(nodes.code, nodes.output).toBe(0);
    expect(nodes.output).toContain("l40s-p");

    // the agent's own token: a poll at its current index waits (3 s here) and the server, not the proxy, answers it
    const token = readFileSync(join(c.stateDir("l40s-p"), "node-token"), "utf8").trim();
    const poll = (q = "") =>
      fetch(`${proxyUrl}/api/v1/agents/l40s-p/assignments${q}`, { headers: { authorization: `Bearer ${token}` } });
    const now = await poll();
    const index = Number(now.headers.get("x-llmgw-index"));
    const parked = await poll(`?index=${index}&wait=3`);
    expect(parked.status).toBe(200);
    expect(Number(parked.headers.get("x-llmgw-index"))).toBe(index);
    expect((await parked.json()).shards).toHaveLength(1);

    const key = await c.key("proxy");
    const res = await fetch(`${proxyUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 10, stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    // the first chunk the proxy passes on comes before the end of the stream: nothing buffers it (the site turns
    // buffering off, and the router's SSE answers carry X-Accel-Buffering: no for proxies that keep it on)
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toMatch(/^data: \{/);
    expect(first).not.toContain("[DONE]");
    let body = first;
    for (let r = await reader.read(); !r.done; r = await reader.read()) body += new TextDecoder().decode(r.value);
    expect(body.match(/^data: \{/gm)?.length).toBeGreaterThanOrEqual(3);
    expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true);
  }, 60_000);
});
