// `llmgw demo` as a newcomer runs it: a real process that starts the control plane, agents and mock engines, prints
// how to connect, streams through the router, and leaves nothing running (engines included) when it stops.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { processAlive } from "../../agent/sim/cluster.js";
import { liveEngines, stateDirsIn } from "../helpers/agents.js";
import { tempDir } from "../helpers/db.js";
import { LLMGW, type Proc, runLlmgw, start, stop } from "../helpers/process.js";

const tmp = tempDir();

const demos: Proc[] = [];
const demo = (args: string[]) => {
  const p = start(process.execPath, [LLMGW, "demo", "--port", "0", ...args]);
  demos.push(p);
  return p;
};

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
  // Where the default scenario's replicas go is checked without starting it (test/placement/demo-scenario.test.ts);
  // the installed package runs it whole with --exit-when-ready (package.test.ts). Here: one real run, small scenario.
  it("runs a --scenario cluster: prints the console, tokens and a curl line that streams through the router; SIGTERM stops everything, engines included", async () => {
    const file = join(tmp.dir, "two-nodes.yaml");
    writeFileSync(
      file,
      "nodes:\n  - { id: solo, kind: l40s, uuid_prefix: '5050' }\n  - { id: duo, kind: l40s, uuid_prefix: '5051' }\n" +
        "models:\n  - { name: solo-chat, replicas: 2, gpu_class: l40s-45g, about: one L40S each }\n",
    );
    const running = demo(["--scenario", file]);
    const p = await printed(running);
    expect(p.out).toMatch(/2 simulated nodes \(2× L40S\), 2 replicas/);
    expect(p.url, p.out).toBeDefined();
    expect(p.admin).toBeDefined();
    expect(p.key).toBeDefined();
    expect(p.curl![1]).toBe(`${p.url}/v1/chat/completions`);
    expect(p.curl![2]).toBe(p.key);
    expect(p.curl![3]).toContain('"model":"solo-chat"');
    const r = await fetch(p.curl![1]!, {
      method: "POST",
      headers: { authorization: `Bearer ${p.curl![2]}`, "content-type": "application/json" },
      body: p.curl![3],
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/text\/event-stream/);
    const sse = await r.text();
    expect(sse).toContain('"content":" token1"');
    expect(sse.trim().endsWith("data: [DONE]")).toBe(true);
    expect((await fetch(`${p.url}/admin`)).status).toBeLessThan(500);
    const replicas = (await (
      await fetch(`${p.url}/api/v1/replicas`, { headers: { authorization: `Bearer ${p.admin}` } })
    ).json()) as { items: { state: string; shards: { nodeId: string }[] }[] };
    expect(replicas.items.map((x) => [x.state, x.shards[0]!.nodeId]).sort()).toEqual([
      ["ready", "duo"],
      ["ready", "solo"],
    ]);

    const engines = [...liveEngines(stateDirsIn(p.dir!)).values()];
    expect(engines).toHaveLength(2);
    expect(await stop(running)).toBe(0);
    expect(existsSync(p.dir!)).toBe(false);
    expect(engines.filter(processAlive)).toEqual([]);
  }, 90_000);

  it("--exit-when-ready stops once ready, leaving nothing running", async () => {
    const file = join(tmp.dir, "one-node.yaml");
    writeFileSync(
      file,
      "nodes:\n  - { id: solo, kind: l40s, uuid_prefix: '5050' }\nmodels:\n  - { name: solo-chat, replicas: 1, gpu_class: l40s-45g, about: one L40S }\n",
    );
    const data = join(tmp.dir, "kept");
    const ready = demo(["--scenario", file, "--exit-when-ready", "--data", data]);
    const q = await printed(ready);
    expect(q.out).toMatch(/1 simulated nodes \(1× L40S\), 1 replicas/);
    expect(q.out).toContain("Stopping now (--exit-when-ready).");
    expect(await ready.exited).toBe(0);
    // --data keeps the directory, so its state dirs say which engines ran: none still does
    expect(stateDirsIn(data)).toHaveLength(1);
    expect(liveEngines(stateDirsIn(data)).size).toBe(0);
    expect(existsSync(join(data, "llmgw.db"))).toBe(true);
  }, 60_000);

  it("refuses a bad scenario with every bad key named (exit 2)", async () => {
    const file = join(tmp.dir, "bad.yaml");
    writeFileSync(file, "nodes:\n  - { id: a, kind: dgx-z9, uuid_prefix: nothex, colour: blue }\n");
    const r = await runLlmgw(["demo", "--scenario", file]);
    expect(r.code).toBe(2);
    expect(r.output).toContain(`${file}: invalid scenario:`);
    for (const bad of [
      "nodes.0.kind: Invalid option",
      "nodes.0.uuid_prefix: 4 lowercase hex digits",
      "nodes.0.colour: unknown key",
    ])
      expect(r.output).toContain(bad);
    writeFileSync(
      file,
      "nodes:\n  - { id: b, kind: gb200, uuid_prefix: '0001' }\n  - { id: b, kind: l40s, uuid_prefix: '0001' }\n",
    );
    const twice = await runLlmgw(["demo", "--scenario", file]);
    expect(twice.code).toBe(2);
    for (const bad of [
      "nodes.0.tray: a gb200 node needs its tray number",
      "nodes.1.id: node b appears twice",
      "nodes.1.uuid_prefix: uuid_prefix 0001 is used by another node",
    ])
      expect(twice.output).toContain(bad);
  });
});
