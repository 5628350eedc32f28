// `llmgw demo` as a newcomer runs it: a real process that starts the control plane, agents and mock engines, prints
// how to connect, streams through the router, and leaves nothing running (engines included) when it stops.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pidsWithArgs } from "../helpers/agents.js";
import { tempDir } from "../helpers/db.js";
import { LLMGW, type Proc, runLlmgw, start, stop } from "../helpers/process.js";

const tmp = tempDir();

const demos: Proc[] = [];
const demo = (args: string[]) => {
  const p = start(process.execPath, [LLMGW, "demo", "--port", "0", ...args]);
  demos.push(p);
  return p;
};
const MODELS = ["demo-chat", "demo-nvl", "demo-mig", "demo-ib"];
const demoEngines = () => MODELS.flatMap((m) => pidsWithArgs("mock-engine", "--model", m));

/** The lines the demo prints once ready. */
async function printed(p: Proc) {
  await p.waitFor(/curl -N .*\n[\s\S]*Logs in /, 150_000);
  const out = p.output();
  return {
    out,
    url: out.match(/console: +(http:\/\/127\.0\.0\.1:\d+)\/admin/)?.[1],
    admin: out.match(/admin token: +(llmgw_adm_\w+)/)?.[1],
    key: out.match(/API key: +(llmgw_key_\w+)/)?.[1],
    curl: out.match(/curl -N (\S+) -H "Authorization: Bearer (\S+)" .* -d '(.*)'/),
    dir: out.match(/Logs in (\S+)\./)?.[1],
  };
}

// SIGTERM, not the SIGKILL of the shared clean-up, so a failed test's demo still stops its detached engines
afterAll(async () => {
  await Promise.all(demos.map(stop));
  tmp.cleanup();
});

describe("llmgw demo", () => {
  it("runs the default scenario: prints the console, tokens and a curl line that streams through the router; replicas sit where the scenario says; SIGTERM stops everything", async () => {
    const running = demo([]);
    const p = await printed(running);
    expect(p.url, p.out).toBeDefined();
    expect(p.admin).toBeDefined();
    expect(p.key).toBeDefined();
    expect(p.curl![1]).toBe(`${p.url}/v1/chat/completions`);
    expect(p.curl![2]).toBe(p.key);
    const r = await fetch(p.curl![1]!, { method: "POST", headers: { authorization: `Bearer ${p.curl![2]}`, "content-type": "application/json" }, body: p.curl![3] });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/text\/event-stream/);
    const sse = await r.text();
    expect(sse).toContain('"content":" token1"');
    expect(sse.trim().endsWith("data: [DONE]")).toBe(true);
    expect((await fetch(`${p.url}/admin`)).status).toBeLessThan(500);

    const admin = async (path: string) => (await (await fetch(`${p.url}${path}`, { headers: { authorization: `Bearer ${p.admin}` } })).json()) as any;
    const trays = (await admin("/api/v1/nvlink")).domains[0].trays as { node: string; eligible: boolean; reasons: string[] }[];
    expect(trays.map((t) => [t.node, t.eligible])).toEqual([1, 2, 3, 4, 5, 6].map((i) => [`gb-tray-${i}`, i !== 6]));
    expect(trays[5]!.reasons).toEqual(["GPU 3 fabric In Progress"]);
    const replicas = (await admin("/api/v1/replicas")).items as { deployment: string; state: string; shards: { nodeId: string; fabric: string; devices: string[] }[] }[];
    const where = (d: string) => replicas.filter((x) => x.deployment === d).map((x) => x.shards.map((s) => `${s.nodeId}:${s.fabric.split(":")[0]}:${s.devices.length}`).join(" "));
    expect(replicas.every((x) => x.state === "ready")).toBe(true);
    expect(where("demo-chat")).toEqual(["hgx-h100-1:single:8"]);
    expect(where("demo-nvl")[0]).toMatch(/^gb-tray-[1-5]:nvlink:4 gb-tray-[1-5]:nvlink:4$/);
    expect(where("demo-mig")).toEqual(["a100-mig-1:single:1", "a100-mig-1:single:1"]);
    expect(where("demo-ib")[0]).toMatch(/^l40s-[12]:ib:1 l40s-[12]:ib:1$/);

    expect(await stop(running)).toBe(0);
    expect(existsSync(p.dir!)).toBe(false);
    expect(demoEngines()).toEqual([]);
  }, 200_000);

  it("--scenario runs another cluster; --exit-when-ready stops once ready", async () => {
    const file = join(tmp.dir, "one-node.yaml");
    writeFileSync(file, "nodes:\n  - { id: solo, kind: l40s, uuid_prefix: '5050' }\nmodels:\n  - { name: solo-chat, replicas: 1, gpu_class: l40s-45g, about: one L40S }\n");
    const ready = demo(["--scenario", file, "--exit-when-ready"]);
    const q = await printed(ready);
    expect(q.out).toMatch(/1 simulated nodes \(1× L40S\), 1 replicas/);
    expect(q.curl![3]).toContain('"model":"solo-chat"');
    expect(await ready.exited).toBe(0);
    expect(existsSync(q.dir!)).toBe(false);
    expect(pidsWithArgs("mock-engine", "--model", "solo-chat")).toEqual([]);
  }, 60_000);

  it("refuses a bad scenario with every bad key named (exit 2)", async () => {
    const file = join(tmp.dir, "bad.yaml");
    writeFileSync(file, "nodes:\n  - { id: a, kind: dgx-z9, uuid_prefix: nothex, colour: blue }\n");
    const r = await runLlmgw(["demo", "--scenario", file]);
    expect(r.code).toBe(2);
    expect(r.output).toContain(`${file}: invalid scenario:`);
    for (const bad of ["nodes.0.kind: Invalid option", "nodes.0.uuid_prefix: 4 lowercase hex digits", "nodes.0.colour: unknown key"]) expect(r.output).toContain(bad);
    writeFileSync(file, "nodes:\n  - { id: b, kind: gb200, uuid_prefix: '0001' }\n  - { id: b, kind: l40s, uuid_prefix: '0001' }\n");
    const twice = await runLlmgw(["demo", "--scenario", file]);
    expect(twice.code).toBe(2);
    for (const bad of ["nodes.0.tray: a gb200 node needs its tray number", "nodes.1.id: node b appears twice", "nodes.1.uuid_prefix: uuid_prefix 0001 is used by another node"]) expect(twice.output).toContain(bad);
  });
});
