// Failure drills (DESIGN §9) with real processes: what a user would check when the control plane dies under a
// running cluster.
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { killEngines, mockProfile, recordedPid, startAgent, writeAgentConfig } from "../helpers/agents.js";
import { freePort, killAll, startServe, stop, until } from "../helpers/process.js";

const ADMIN = `llmgw_adm_${"drillsxx".repeat(5)}`;
const tmp = tempDir();
const stateDirs: string[] = [];
afterAll(async () => {
  await killAll();
  killEngines(stateDirs);
  tmp.cleanup();
});

const api = async (url: string, method: string, path: string, body?: unknown) => {
  const r = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await r.json()) as any;
};
type Replica = { id: string; state: string; endpoint: string | null; shards: { shardId: string; nodeId: string }[] };

describe("drill: the control plane is killed and restarted on the same database", () => {
  it("engines keep serving, the agent backs off and resumes, and nothing is re-placed", async () => {
    const port = await freePort();
    const db = `${tmp.dir}/llmgw.db`;
    const serve = () => startServe(["--db", db, "--port", String(port)], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
    let server = await serve();
    const url = server.url;
    const joinToken = (await api(url, "POST", "/api/v1/join-tokens", { name: "drill" })).token;
    const first = await freePort();
    const { config, stateDir } = writeAgentConfig({ nodeId: "d1", server: url, joinToken, dir: tmp.dir, ports: [first, first + 9] });
    stateDirs.push(stateDir);
    const agent = startAgent(config);
    await api(url, "PUT", "/api/v1/models/m", { spec: { weightsPath: "/models/m", profiles: [mockProfile("one")] } });
    await api(url, "PUT", "/api/v1/deployments/m", { spec: { model: "m", replicas: 1 } });
    await until(async () => ((await api(url, "GET", "/api/v1/replicas")).items as Replica[]).some((r) => r.state === "ready"), 30_000, "a ready replica");
    const [before] = (await api(url, "GET", "/api/v1/replicas")).items as Replica[];
    const pid = recordedPid(stateDir, before!.shards[0]!.shardId);

    server.child.kill("SIGKILL");
    await server.exited;
    // the engine answers on its own while the control plane is gone, and the agent keeps running
    for (let i = 0; i < 3; i++) expect((await fetch(`${before!.endpoint}/v1/models`)).status).toBe(200);
    await agent.waitFor(/control plane: .*cannot reach .*retrying in/);
    expect(agent.child.exitCode).toBeNull();

    server = await serve();
    expect(server.url).toBe(url);
    // the agent comes back on its own (its next try registers or polls), and the node is ready again
    await until(async () => (await api(url, "GET", "/api/v1/nodes/d1")).state === "ready", 30_000, "the node ready again");
    const after = (await api(url, "GET", "/api/v1/replicas")).items as Replica[];
    expect(after.map((r) => [r.id, r.state, r.endpoint])).toEqual([[before!.id, "ready", before!.endpoint]]);
    expect(recordedPid(stateDir, before!.shards[0]!.shardId)).toBe(pid);
    expect(() => process.kill(pid, 0)).not.toThrow();
    await stop(server);
  }, 90_000);
});
