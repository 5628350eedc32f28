import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { runCtl } from "../../bin/ctl-cli.js";
import { ApiKey, ApiKeyWithSecret } from "../../shared/schemas/api-key.js";
import { Deployment } from "../../shared/schemas/deployment.js";
import { Model } from "../../shared/schemas/model.js";
import { Node, NodeSummary } from "../../shared/schemas/node.js";
import { NvlinkView } from "../../shared/schemas/nvlink.js";
import { Capacity } from "../../shared/schemas/plan.js";
import { ReplicaView } from "../../shared/schemas/replica.js";
import { AdminToken, CreatedJoinToken, JoinToken } from "../../shared/schemas/token.js";
import { z } from "../../shared/z.js";
import { tempDir } from "../helpers/db.js";
import { registerBody } from "../helpers/inventory.js";
import { DOMAIN, registerFleet } from "../helpers/nvlink-fleet.js";
import { freePort, LLMGW, startServe, stop } from "../helpers/process.js";

const ADMIN = "ctl-test-admin-token-0000000000000001";
const tmp = tempDir();
let server: Awaited<ReturnType<typeof startServe>>;
const T = 60_000;
const list = <S extends z.ZodType>(s: S) => z.object({ items: z.array(s) });

type Ran = { code: number | null; stdout: string; stderr: string };
const envOf = (o: { env?: Record<string, string> }) => ({
  ...process.env,
  LLMGW_SERVER: server.url,
  LLMGW_TOKEN: ADMIN,
  ...o.env,
});

/** Runs `llmgw ctl <args>` in this process (runCtl, the CLI's own parser and commands) against the test server. */
async function ctl(args: string[], o: { env?: Record<string, string>; input?: string } = {}): Promise<Ran> {
  let stdout = "";
  let stderr = "";
  const code = await runCtl(args, {
    out: (s) => void (stdout += s),
    err: (s) => void (stderr += s),
    env: envOf(o),
    stdin: [Buffer.from(o.input ?? "")],
  });
  return { code, stdout, stderr };
}

/** Runs a real `llmgw ctl <args>` process: exit codes, stdin and the environment as a shell sees them. */
function ctlProcess(args: string[], o: { env?: Record<string, string>; input?: string } = {}): Promise<Ran> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [LLMGW, "ctl", ...args], {
      cwd: tmp.dir,
      env: envOf(o),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(o.input ?? "");
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}
/** Runs ctl, expects exit 0, returns stdout. */
async function ok(args: string[], o?: Parameters<typeof ctl>[1]): Promise<string> {
  const r = await ctl(args, o);
  if (r.code !== 0) throw new Error(`llmgw ctl ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}
const file = (name: string, text: string) => {
  const path = join(tmp.dir, name);
  writeFileSync(path, text);
  return path;
};
const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

beforeAll(async () => {
  server = await startServe(["--db", join(tmp.dir, "db.sqlite")], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
  const join_ = await (
    await fetch(`${server.url}/api/v1/join-tokens`, { method: "POST", headers: auth(ADMIN), body: "{}" })
  ).json();
  const reg = await fetch(`${server.url}/api/v1/agents/register`, {
    method: "POST",
    headers: auth(join_.token),
    body: JSON.stringify(registerBody("gpu-node-01")),
  });
  expect(reg.status).toBe(201);
});
afterAll(async () => {
  await stop(server);
  tmp.cleanup();
});

const FLEET = (replicas: number) => `# models before the deployments that use them
kind: Model
name: llama-8b
spec:
  weightsPath: /models/llama-3.1-8b-instruct
  profiles:
    - {name: one-h100, engine: vllm, gpuClass: h100-80g}
---
kind: Deployment
name: chat
spec: {model: llama-8b, replicas: ${replicas}, pool: prod}
---
- kind: ApiKey
  name: team-search
  spec: {models: [llama-8b], requestsPerMinute: 600}
`;

describe("llmgw ctl apply", () => {
  it(
    "creates, then leaves unchanged, then updates what changed",
    async () => {
      const path = file("fleet.yaml", FLEET(1));
      const first = (await ok(["apply", "-f", path])).trimEnd().split("\n");
      expect(first.slice(0, 2)).toEqual(["model/llama-8b created", "deployment/chat created"]);
      expect(first[2]).toMatch(/^apikey\/team-search created; its secret, shown once: llmgw_key_\w+$/);
      expect(await ok(["apply", "-f", path])).toBe(
        "model/llama-8b unchanged\ndeployment/chat unchanged\napikey/team-search unchanged\n",
      );
      file("fleet.yaml", FLEET(2));
      expect(await ok(["apply", "-f", path])).toBe(
        "model/llama-8b unchanged\ndeployment/chat updated\napikey/team-search unchanged\n",
      );

      const json = JSON.parse(await ok(["apply", "-f", path, "--json"]));
      expect(json.failed).toEqual([]);
      expect(json.applied.map((a: { outcome: string }) => a.outcome)).toEqual(["unchanged", "unchanged", "unchanged"]);
      expect(Model.parse(json.applied[0].object).metadata.version).toBe(1);
      expect(Deployment.parse(json.applied[1].object).metadata.version).toBe(2);
      expect(ApiKey.parse(json.applied[2].object).spec.requestsPerMinute).toBe(600);
    },
    T,
  );

  it(
    "reads stdin, shows the API's validation errors by field path and stops at the first (exit 1)",
    async () => {
      const bad = [
        {
          kind: "Model",
          name: "broken",
          spec: {
            weightsPath: "/m",
            colour: "blue",
            profiles: [{ name: "bad", engine: "vllm", gpuClass: "h100-80g", tp: 4, gpusPerNode: 2 }],
          },
        },
        { kind: "Deployment", name: "after-broken", spec: { model: "llama-8b", replicas: 0 } },
      ];
      const r = await ctlProcess(["apply", "-f", "-"], { input: JSON.stringify(bad) });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(
        "llmgw ctl: model/broken: spec.colour: unknown field; spec.profiles.0.gpusPerNode: gpusPerNode × nodes (2 × 1) must equal tp × pp (4 × 1)\n",
      );
      expect(r.stderr).toContain("\n  spec.colour: unknown field\n");
      expect((await ctl(["get", "deployment", "after-broken"])).code).toBe(4);

      const going = await ctl(["apply", "-f", "-", "--keep-going"], { input: JSON.stringify(bad) });
      expect(going.code).toBe(1);
      expect(going.stdout).toBe("deployment/after-broken created\n");
      expect(await ok(["delete", "deployment", "after-broken"])).toBe("deployment after-broken deleted\n");
    },
    T,
  );

  it(
    "refuses a malformed file before sending anything (exit 2)",
    async () => {
      const r = await ctl([
        "apply",
        "-f",
        file("bad.yaml", "kind: Model\nname: m1\nspec: {}\n---\nkind: Modle\nname: m2\nspec: {}\n"),
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/bad\.yaml, document 2: kind: Invalid option/);
      expect((await ctl(["get", "model", "m1"])).code).toBe(4);
      const missing = await ctl(["apply", "-f", join(tmp.dir, "nope.yaml")]);
      expect([missing.code, missing.stderr]).toEqual([
        2,
        `llmgw ctl: cannot read ${join(tmp.dir, "nope.yaml")}: ENOENT\n`,
      ]);
      expect((await ctl(["apply"])).code).toBe(2);
    },
    T,
  );
});

describe("llmgw ctl views, parsed with the shared schemas", () => {
  it(
    "nodes, node, cordon and uncordon",
    async () => {
      const nodes = list(NodeSummary).parse(JSON.parse(await ok(["nodes", "--json"])));
      expect(nodes.items.map((n) => [n.id, n.state, n.classes])).toEqual([["gpu-node-01", "ready", { "h100-80g": 8 }]]);
      expect(await ok(["nodes"])).toMatch(
        /^NODE +STATE +POOL +DEVICES +LAST SEEN\ngpu-node-01 +ready +prod +h100-80g × 8 +\d+s ago\n$/,
      );
      const node = Node.parse(JSON.parse(await ok(["node", "gpu-node-01", "--json"])));
      expect(node.devices).toHaveLength(8);
      expect(await ok(["node", "gpu-node-01"])).toMatch(
        /^node gpu-node-01 \(gpu-node-01\.lab, 10\.0\.0\.11 on eth0\)\n/,
      );

      expect(await ok(["cordon", "gpu-node-01"])).toBe("node gpu-node-01: cordoned\n");
      expect(
        list(NodeSummary)
          .parse(JSON.parse(await ok(["nodes", "--state", "cordoned", "--json"])))
          .items.map((n) => n.id),
      ).toEqual(["gpu-node-01"]);
      expect(NodeSummary.parse(JSON.parse(await ok(["uncordon", "gpu-node-01", "--json"]))).state).toBe("ready");
      expect(JSON.parse(await ok(["nodes", "--state", "cordoned", "--json"])).items).toEqual([]);
    },
    T,
  );

  it(
    "status, plan and get",
    async () => {
      // read-only: run them side by side
      const [statusJson, statusText, planJson, planText, models, replicas, chat, deployments] = await Promise.all(
        [
          ["status", "--json"],
          ["status"],
          ["plan", "--json"],
          ["plan"],
          ["get", "models", "--json"],
          ["get", "replicas", "--json"],
          ["get", "deployment", "chat"],
          ["get", "deployments"],
        ].map((a) => ok(a)),
      );
      const status = z
        .object({ deployments: z.array(Deployment), replicas: z.array(ReplicaView), devices: Capacity.shape.classes })
        .parse(JSON.parse(statusJson!));
      expect(status.devices.map((c) => [c.class, c.total, c.free, c.used])).toEqual([["h100-80g", 8, 6, 2]]);
      expect(statusText).toMatch(/\n\nCLASS +TOTAL +FREE +USED +UNAVAILABLE\nh100-80g +8 +6 +2 +-\n$/);
      expect(status.deployments.map((d) => [d.name, d.status.desired, d.status.placed])).toEqual([["chat", 2, 2]]);
      expect(status.replicas.map((r) => r.shards[0]!.nodeId)).toEqual(["gpu-node-01", "gpu-node-01"]);
      expect(statusText).toMatch(
        /^DEPLOYMENT +MODEL +POOL +PHASE +DESIRED +PLACED +READY\nchat +llama-8b +prod +Starting +2 +2 +0\n\nREPLICA /,
      );

      const plan = Capacity.parse(JSON.parse(planJson!));
      expect(plan.classes.map((c) => [c.class, c.total, c.used])).toEqual([["h100-80g", 8, 2]]);
      expect(plan.profiles.map((p) => [p.model, p.pool, p.fits])).toEqual([["llama-8b", "prod", 6]]);
      expect(planText).toMatch(/\nllama-8b +one-h100 +h100-80g +prod +6 +gpu-node-01 × 6\n/);

      expect(
        list(Model)
          .parse(JSON.parse(models!))
          .items.map((m) => m.name),
      ).toEqual(["llama-8b"]);
      expect(list(ReplicaView).parse(JSON.parse(replicas!)).items).toHaveLength(2);
      expect(Deployment.parse(parseYaml(chat!)).spec).toEqual({ model: "llama-8b", replicas: 2, pool: "prod" });
      expect(deployments).toMatch(
        /^DEPLOYMENT +MODEL +POOL +PHASE +READY +VERSION\nchat +llama-8b +prod +Starting +0\/2 +2\n$/,
      );
    },
    T,
  );
});

describe("llmgw ctl keys and tokens", () => {
  it(
    "creates, rotates and deletes an API key, its secret printed once",
    async () => {
      const created = await ctl(["keys", "create", "ci-bot", "--models", "llama-8b", "--rpm", "60", "--tpm", "1000"]);
      expect(created.code).toBe(0);
      expect(created.stdout).toMatch(/^llmgw_key_\w+\n$/);
      expect(created.stderr).toBe("API key ci-bot created; keep the secret above, it is not shown again\n");
      const key = created.stdout.trim();
      expect((await fetch(`${server.url}/v1/models`, { headers: auth(key) })).status).toBe(200);

      const again = await ctl(["keys", "create", "ci-bot"]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/already exists/);

      const keys = list(ApiKey).parse(JSON.parse(await ok(["keys", "--json"])));
      expect(keys.items.find((k) => k.name === "ci-bot")?.spec).toEqual({
        models: ["llama-8b"],
        requestsPerMinute: 60,
        tokensPerMinute: 1000,
      });
      expect(await ok(["keys"])).toMatch(/\nci-bot +llama-8b +60 +1000 +never /);

      const rotated = ApiKeyWithSecret.parse(JSON.parse(await ok(["keys", "rotate", "ci-bot", "--json"])));
      expect(rotated.secret).not.toBe(key);
      expect((await fetch(`${server.url}/v1/models`, { headers: auth(key) })).status).toBe(401);
      expect((await fetch(`${server.url}/v1/models`, { headers: auth(rotated.secret) })).status).toBe(200);

      expect(await ok(["keys", "delete", "ci-bot"])).toBe("API key ci-bot deleted\n");
      expect((await ctl(["keys", "delete", "ci-bot"])).code).toBe(4);
      expect((await ctl(["keys", "rotate", "ci-bot"])).code).toBe(4);
    },
    T,
  );

  it(
    "creates admin and join tokens that work, lists and revokes them",
    async () => {
      const adm = await ctl(["tokens", "create", "ci-pipeline"]);
      expect([adm.code, adm.stderr]).toEqual([
        0,
        expect.stringMatching(/^admin token ci-pipeline \(tok_\w+\) created; keep the secret/),
      ]);
      const token = adm.stdout.trim();
      expect(token).toMatch(/^llmgw_adm_/);
      const tokens = list(AdminToken).parse(
        JSON.parse(await ok(["tokens", "--json"], { env: { LLMGW_TOKEN: token } })),
      );
      const id = tokens.items.find((t) => t.name === "ci-pipeline")!.id;
      expect(await ok(["tokens", "list"])).toContain(`${id}  ci-pipeline`);

      const joined = CreatedJoinToken.parse(
        JSON.parse(
          await ok(["tokens", "join", "--name", "rack-12", "--max-uses", "1", "--expires-in", "1h", "--json"]),
        ),
      );
      expect([joined.maxUses, joined.expiresAt! - joined.createdAt]).toEqual([1, 3_600_000]);
      const reg = await fetch(`${server.url}/api/v1/agents/register`, {
        method: "POST",
        headers: auth(joined.token),
        body: JSON.stringify(registerBody("gpu-node-02")),
      });
      expect(reg.status).toBe(201);
      const joins = list(JoinToken).parse(JSON.parse(await ok(["get", "join-tokens", "--json"])));
      expect(joins.items.find((j) => j.id === joined.id)).toMatchObject({ uses: 1, usable: false });

      expect(await ok(["tokens", "revoke", joined.id])).toBe(`join token ${joined.id} revoked\n`);
      expect(await ok(["tokens", "revoke", id])).toBe(`admin token ${id} revoked\n`);
      expect((await ctl(["tokens"], { env: { LLMGW_TOKEN: token } })).code).toBe(1);
      expect(await ok(["delete", "node", "gpu-node-02"])).toBe("node gpu-node-02 deleted\n");
    },
    T,
  );
});

describe("llmgw ctl exit codes, as real processes", () => {
  it(
    "1 for an API error, with the problem's detail on stderr",
    async () => {
      const r = await ctlProcess(["nodes"], { env: { LLMGW_TOKEN: "not-a-token-of-this-server-00000000" } });
      expect([r.code, r.stdout]).toEqual([1, ""]);
      expect(r.stderr).toMatch(/^llmgw ctl: .*token/);
    },
    T,
  );

  it(
    "2 for usage errors: flags, arguments, kinds, no token",
    async () => {
      const cases = [
        ["nodes", "--colour", "red"],
        ["get"],
        ["get", "gadgets"],
        ["keys", "create", "k", "--rpm", "lots"],
        ["delete", "replica", "r1"],
      ];
      const runs = await Promise.all(cases.map((args) => ctlProcess(args)));
      expect(runs.map((r) => r.code)).toEqual(cases.map(() => 2));
      expect(runs.every((r) => r.stdout === "" && r.stderr !== "")).toBe(true);
      const none = await ctlProcess(["nodes"], { env: { LLMGW_TOKEN: "" } });
      expect([none.code, none.stderr]).toEqual([
        2,
        "llmgw ctl: no admin token: pass --token or set LLMGW_TOKEN (an llmgw_adm_… token)\n",
      ]);
    },
    T,
  );

  it(
    "3 when the server cannot be reached",
    async () => {
      const url = `http://127.0.0.1:${await freePort()}`;
      const r = await ctlProcess(["nodes", "--server", url]);
      expect(r.code).toBe(3);
      expect(r.stderr).toBe(`llmgw ctl: cannot reach ${url}: ECONNREFUSED\n`);
      expect((await ctlProcess(["apply", "-f", file("one.yaml", FLEET(1))], { env: { LLMGW_SERVER: url } })).code).toBe(
        3,
      );
    },
    T,
  );

  it(
    "4 when the object is not found",
    async () => {
      const cases = [
        ["get", "model", "nope"],
        ["node", "nope"],
        ["cordon", "nope"],
        ["delete", "deployment", "nope"],
        ["get", "token", "nope"],
      ];
      const runs = await Promise.all(cases.map((args) => ctlProcess(args)));
      expect(runs.map((r) => r.code)).toEqual(cases.map(() => 4));
      expect(runs[0]!.stderr).toBe("llmgw ctl: no model nope\n");
    },
    T,
  );

  it(
    "0 with help",
    async () => {
      const r = await ctlProcess(["--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Exit status: 0 ok, 1 the API refused");
      expect((await ctlProcess(["apply", "--help"])).stdout).toContain("kind: Deployment");
    },
    T,
  );
});

describe("llmgw ctl in this process (runCtl)", () => {
  it("ends as the process does: usage errors 2 with Commander's message, --help 0, a refused call 1", async () => {
    const bad = await ctl(["nodes", "--colour", "red"]);
    expect([bad.code, bad.stdout, bad.stderr]).toEqual([
      2,
      "",
      "error: unknown option '--colour'\n(run with --help for usage)\n",
    ]);
    const help = await ctl(["--help"]);
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining("Exit status: 0 ok, 1 the API refused")]);
    expect((await ctl(["nodes"], { env: { LLMGW_TOKEN: "not-a-token-of-this-server-00000000" } })).code).toBe(1);
  });
});

describe("llmgw ctl nvlink", () => {
  it(
    "shows each domain's trays, GPUs joined or not, and every reason a tray is out",
    async () => {
      await registerFleet(async (method, path, c = {}) => {
        const res = await fetch(`${server.url}${path}`, {
          method,
          headers: auth(c.token ?? ADMIN),
          body: c.body === undefined ? undefined : JSON.stringify(c.body),
        });
        return { status: res.status, json: await res.json() };
      }, ADMIN);
      const view = NvlinkView.parse(JSON.parse(await ok(["nvlink", "--json"])));
      expect(view.domains.map((d) => [d.key, d.trays.map((t) => t.node), d.eligibleTrays])).toEqual([
        [DOMAIN, ["gb-tray-a", "gb-tray-b", "gb-tray-c", "gb-tray-d"], 2],
      ]);
      expect(view.standalone.map((s) => s.node)).toEqual(["gpu-node-01", "hgx-01"]);

      const text = await ok(["nvlink"]);
      expect(text.split("\n")[0]).toBe(
        `NVLink domain ${DOMAIN}: 2 of 4 tray(s) eligible; degraded, so placed on after healthy domains`,
      );
      expect(text).toMatch(/\n {4}gb-tray-b +0 joined; 1 joined; 2 NOT JOINED: fabric In Progress; 3 joined\n/);
      expect(text).toMatch(/Out of placement\n {4}gb-tray-b +GPU 2 fabric In Progress\n {4}gb-tray-d +IMEX down\n/);
      expect(text).toMatch(/\n {2}hgx-01 +ready +8 GPU\(s\) +single-machine NVSwitch/);
      expect(text).toMatch(/No NVLink fabric reported: mig-01\n$/);
    },
    T,
  );
});
