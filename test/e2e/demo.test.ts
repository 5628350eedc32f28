// `llmgw demo` as a newcomer runs it: a real process that starts the control plane, agents and mock engines, prints
// how to connect, streams through the router, and leaves nothing running (engines included) when it stops.
import { existsSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { pidsWithArgs } from "../helpers/agents.js";
import { LLMGW, type Proc, start, stop } from "../helpers/process.js";

const demos: Proc[] = [];
const demo = (args: string[]) => {
  const p = start(process.execPath, [LLMGW, "demo", "--port", "0", ...args]);
  demos.push(p);
  return p;
};
const demoEngines = () => [...pidsWithArgs("mock-engine", "--model", "demo-chat"), ...pidsWithArgs("mock-engine", "--model", "demo-2node")];

/** The lines the demo prints once ready. */
async function printed(p: Proc) {
  await p.waitFor(/curl -N .*\n[\s\S]*Logs in /, 80_000);
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
});

describe("llmgw demo", () => {
  it("prints the console, tokens and a curl line that streams through the router; SIGTERM stops everything", async () => {
    const running = demo([]);
    const ready = demo(["--exit-when-ready"]);

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
    expect(await stop(running)).toBe(0);
    expect(existsSync(p.dir!)).toBe(false);

    const q = await printed(ready);
    expect(q.url && q.admin && q.key && q.curl).toBeTruthy();
    expect(await ready.exited).toBe(0);
    expect(existsSync(q.dir!)).toBe(false);
    expect(demoEngines()).toEqual([]);
  }, 90_000);
});
