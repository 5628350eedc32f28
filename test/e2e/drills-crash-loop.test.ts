// Drill: an engine that exits at once, on a node where it fits again and again. Its exit code, run time and log's
// last lines show in /api/v1/replicas while it waits to restart, in `llmgw ctl logs` and `ctl status` once it is
// Failed; the deployment is re-placed once at once, then backs off, and an event says so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LLMGW } from "../../agent/sim/cluster.js";
import { tempDir } from "../helpers/db.js";
import { killAll, runLlmgw, until } from "../helpers/process.js";
import { SIM_ADMIN, type SimCluster, startSimCluster } from "../helpers/sim.js";

const tmp = tempDir();
let c: SimCluster;
const CRASH = "echo loading weights; echo 'RuntimeError: CUDA error: out of memory' >&2; exit 1";

const profile = (args: string[]) => ({
  name: "one",
  engine: "command",
  gpuClass: "h100-80g",
  tp: 1,
  gpusPerNode: 1,
  args,
});

beforeAll(async () => {
  c = await startSimCluster({
    dir: tmp.dir,
    scenario: "nodes:\n  - { id: hgx-a, kind: hgx-h100, uuid_prefix: d011 }\n",
    // one restart, two seconds apart: the failed engine waits long enough to be seen
    agentExtra: { restart_limit: 1, restart_base_s: 2, restart_max_s: 2 },
    // a fleet of four replicas may repair four a minute; the sweep (which places after repairs) runs every second
    serveEnv: { LLMGW_REPAIR_MAX_FRACTION: "1", LLMGW_SWEEP_INTERVAL_S: "1" },
  });
  const serve = [process.execPath, LLMGW, "mock-engine", "--port", "{port}", "--model", "{model}", "--host", "{host}"];
  await c.api("PUT", "/api/v1/models/steady", { spec: { weightsPath: "/models/steady", profiles: [profile(serve)] } });
  await c.api("PUT", "/api/v1/deployments/steady", { spec: { model: "steady", replicas: 3 } });
  await c.ready("steady", 3);
  await c.api("PUT", "/api/v1/models/crashy", {
    spec: { weightsPath: "/models/crashy", profiles: [profile(["sh", "-c", CRASH])] },
  });
  await c.api("PUT", "/api/v1/deployments/crashy", { spec: { model: "crashy", replicas: 1 } });
}, 90_000);
afterAll(async () => {
  await c?.close();
  await killAll();
  tmp.cleanup();
});

describe("a crash-looping engine", () => {
  it("shows its exit, run time and last log line while it waits to restart", async () => {
    let shard: { failure: string | null; lastFailure: { logTail: string[]; exitCode?: number } | null } | undefined;
    await until(
      async () => {
        const [r] = (await c.api("GET", "/api/v1/replicas?deployment=crashy")).body.items;
        shard = r?.shards[0];
        return !!shard?.failure;
      },
      30_000,
      "a failure on crashy's shard",
    );
    expect(shard!.failure).toMatch(/^exit 1 after \d+ s \(restart 1 of 1\): RuntimeError: CUDA error: out of memory$/);
    expect(shard!.lastFailure!.exitCode).toBe(1);
    expect(shard!.lastFailure!.logTail).toEqual(["loading weights", "RuntimeError: CUDA error: out of memory"]);
  });

  it("is re-placed once at once, then Failed with the reason and a back-off, said by an event", async () => {
    let status: { phase: string; failure?: string; pending: { reason: string }[] } | undefined;
    await until(
      async () => (status = (await c.api("GET", "/api/v1/deployments/crashy")).body.status).phase === "Failed",
      60_000,
      "crashy Failed",
    );
    expect(status!.failure).toMatch(
      /^failed 2 times in a row past the restart limit \(last: exit 1 after \d+ s \(gave up after 1 restart\): RuntimeError: CUDA error: out of memory\); next try at (\d\d:\d\d:\d\d) UTC$/,
    );
    const repaired = (await c.api("GET", "/api/v1/events?type=replica_repaired")).body.items as {
      at: number;
      data: { replica: string };
    }[];
    expect(repaired).toHaveLength(2);
    const [failing] = (await c.api("GET", "/api/v1/events?type=deployment_failing")).body.items as {
      at: number;
      data: { retryAt: number };
    }[];
    // the next try comes a minute after the second failure, not at the next sweep
    expect(failing!.data.retryAt - failing!.at).toBe(60_000);
    expect(await c.replicas("crashy")).toEqual([]);
    // the router says why the model has no replica: its own failure
    const key = await c.key();
    let said = "";
    await until(
      async () => {
        const res = await fetch(`${c.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "crashy", messages: [{ role: "user", content: "hi" }] }),
        });
        said = `${res.status} ${(await res.json()).error.message}`;
        return said.includes("failed 2 times");
      },
      10_000,
      "the router's reason for crashy",
    );
    expect(said).toMatch(
      /^503 no ready replica of crashy: failed 2 times in a row past the restart limit \(last: exit 1/,
    );

    // the console's deployments page and overview, logged in as a browser is
    const login = await fetch(`${c.url}/admin/login`, {
      method: "POST",
      body: new URLSearchParams({ token: SIM_ADMIN, next: "/admin" }),
      redirect: "manual",
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    for (const page of ["/admin/deployments", "/admin"]) {
      const html = await (await fetch(`${c.url}${page}`, { headers: { cookie } })).text();
      expect(html, page).toMatch(/failed 2 times in a row past the restart limit \(last: exit 1 after \d+ s/);
      expect(html, page).toContain("RuntimeError: CUDA error: out of memory");
    }

    // ctl status and ctl logs, as an operator runs them
    const env = { LLMGW_SERVER: c.url, LLMGW_TOKEN: SIM_ADMIN };
    const st = await runLlmgw(["ctl", "status"], { env });
    expect(st.code).toBe(0);
    expect(st.output).toMatch(/Failed\n\s+crashy\s+Failed\s+failed 2 times in a row/);
    const logs = await runLlmgw(["ctl", "logs", repaired[0]!.data.replica], { env });
    expect(logs.code, logs.output).toBe(0);
    expect(logs.output).toMatch(
      /-s0 on hgx-a, (failed|stopped): exit 1 after \d+ s \(gave up after 1 restart\): RuntimeError: CUDA error: out of memory\n {2}loading weights\n {2}RuntimeError: CUDA error: out of memory\n/,
    );
  });
});
