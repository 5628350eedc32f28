import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseAgentConfig } from "../../../agent/config.js";
import { gatherDoctorInput, ownEnginePids, probeHealth, probeNvml, probeToken } from "../../../agent/doctor/gather.js";
import { procStat } from "../../../agent/supervisor/proc.js";
import { recordPath, writeRecord } from "../../../agent/supervisor/state-files.js";
import { tempDir } from "../../helpers/db.js";
import { FIXTURES } from "../../helpers/inventory.js";
import { makeShard } from "../engines/shard.js";

const CP = "http://cp.test:8080";
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** A state dir holding `token` as its node token (none when undefined). */
function stateDir(name: string, token?: string): string {
  const dir = join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  if (token !== undefined) writeFileSync(join(dir, "node-token"), `${token}\n`);
  return dir;
}
const cfgWith = (yaml: string) => parseAgentConfig(yaml);

describe("probeHealth", () => {
  it("reads the version, the round trip and the Date header, with the local time half-way", async () => {
    server.use(
      http.get(`${CP}/healthz`, () =>
        HttpResponse.json({ status: "ok", version: "0.1.0" }, { headers: { date: "Thu, 15 Jan 2026 10:00:00 GMT" } }),
      ),
    );
    const before = Date.now();
    const h = await probeHealth(CP);
    expect(h).toMatchObject({ ok: true, version: "0.1.0", serverDate: "Thu, 15 Jan 2026 10:00:00 GMT" });
    if (!h.ok) return;
    expect(h.localMs).toBeGreaterThanOrEqual(before);
    expect(h.localMs).toBeLessThanOrEqual(Date.now());
  });

  it.each([
    [
      "an error status",
      () => HttpResponse.text("database unreachable", { status: 503 }),
      /^GET \/healthz: HTTP 503 database unreachable$/,
    ],
    [
      "something that is not llmgw",
      () => HttpResponse.text("<html>login</html>"),
      /not JSON \(is this an llmgw control plane\?\)/,
    ],
    ["no connection", () => HttpResponse.error(), /^GET \/healthz: cannot reach it: /],
  ])("fails on %s", async (_, answer, error) => {
    server.use(http.get(`${CP}/healthz`, answer));
    expect(await probeHealth(CP)).toEqual({ ok: false, error: expect.stringMatching(error) });
  });
});

describe("probeToken", () => {
  it("polls the node's assignments with its token and wait=0", async () => {
    let seen: { auth: string | null; url: URL } | undefined;
    server.use(
      http.get(`${CP}/api/v1/agents/:node/assignments`, ({ request }) => {
        seen = { auth: request.headers.get("authorization"), url: new URL(request.url) };
        return HttpResponse.json({ index: 3, shards: [] });
      }),
    );
    const cfg = cfgWith(`node_id: gpu-01\nstate_dir: ${stateDir("accepted", "llmgw_node_abc")}\n`);
    expect(await probeToken({ base: CP, cfg, reachable: true })).toEqual({ kind: "accepted", nodeId: "gpu-01" });
    expect(seen?.auth).toBe("Bearer llmgw_node_abc");
    expect(seen?.url.pathname).toBe("/api/v1/agents/gpu-01/assignments");
    expect(seen?.url.searchParams.get("wait")).toBe("0");
  });

  it("reports the status and detail of a refusal", async () => {
    server.use(
      http.get(`${CP}/api/v1/agents/:node/assignments`, () =>
        HttpResponse.json(
          {
            type: "urn:llmgw:problem:unauthorized",
            title: "Unauthorized",
            status: 401,
            detail: "unknown node token: the node may have been deleted; register again",
            code: "unauthorized",
            requestId: "r",
          },
          { status: 401 },
        ),
      ),
    );
    const cfg = cfgWith(`node_id: gpu-01\nstate_dir: ${stateDir("refused", "llmgw_node_old")}\n`);
    expect(await probeToken({ base: CP, cfg, reachable: true })).toEqual({
      kind: "refused",
      nodeId: "gpu-01",
      status: 401,
      message: expect.stringContaining("unknown node token"),
    });
  });

  it.each([
    ["no token, a join token", "join_token: llmgw_join_x\n", undefined, true, { kind: "none", joinToken: true }],
    ["no token, no join token", "", undefined, true, { kind: "none", joinToken: false }],
    [
      "a token, control plane down",
      "node_id: gpu-01\n",
      "llmgw_node_x",
      false,
      { kind: "unchecked", nodeId: "gpu-01" },
    ],
  ])("%s", async (name, yaml, token, reachable, expected) => {
    const cfg = cfgWith(`${yaml}state_dir: ${stateDir(name.replace(/\W+/g, "-"), token)}\n`);
    expect(await probeToken({ base: CP, cfg, reachable })).toEqual(expected);
  });

  it("says when the token file cannot be read", async () => {
    const dir = stateDir("unreadable");
    mkdirSync(join(dir, "node-token"));
    expect(await probeToken({ base: CP, cfg: cfgWith(`state_dir: ${dir}\n`), reachable: true })).toEqual({
      kind: "unreadable",
      error: "EISDIR",
    });
  });
});

describe("ownEnginePids", () => {
  it("reads the live engines of the state dir and removes no record", async () => {
    const dir = stateDir("engines");
    await writeRecord(dir, {
      shard: makeShard({ shardId: "live" }),
      pid: process.pid,
      startTime: procStat(process.pid)!.startTime,
      startedAt: 1,
      restarts: 0,
      state: "ready",
    });
    await writeRecord(dir, {
      shard: makeShard({ shardId: "gone" }),
      pid: process.pid,
      startTime: procStat(process.pid)!.startTime - 1,
      startedAt: 1,
      restarts: 0,
      state: "ready",
    });
    expect(await ownEnginePids(dir)).toContain(process.pid);
    expect(existsSync(recordPath(dir, "gone"))).toBe(true);
    expect(await ownEnginePids(join(tmp.dir, "absent"))).toEqual(new Set());
  });
});

describe("probeNvml", () => {
  it("reports the driver and GPU count, or why the library did not load", () => {
    expect(
      probeNvml(() => ({ snapshot: () => ({ driverVersion: "580.105.08", cudaVersion: "13.0", gpus: [] }) })),
    ).toEqual({ ok: true, driverVersion: "580.105.08", gpus: 0 });
    expect(
      probeNvml(() => {
        throw new Error("Failed to load shared library: libnvidia-ml.so.1: cannot open shared object file");
      }),
    ).toEqual({ ok: false, error: "Failed to load shared library: libnvidia-ml.so.1: cannot open shared object file" });
  });
});

/** Files under a fresh directory of the temp dir (a crafted /sys and /proc tree). */
function tree(name: string, files: Record<string, string>): string {
  const root = join(tmp.dir, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  mkdirSync(root, { recursive: true });
  return root;
}

describe("gatherDoctorInput", () => {
  it("reads nodes_config.cfg and, with the node token accepted, asks for the NVLink peers", async () => {
    server.use(
      http.get(`${CP}/healthz`, () => HttpResponse.json({ status: "ok", version: "0.1.0" })),
      http.get(`${CP}/api/v1/agents/:node/assignments`, () => HttpResponse.json({ index: 1, shards: [] })),
      http.get(`${CP}/api/v1/agents/:node/nvlink-peers`, () =>
        HttpResponse.json({ domain: "d", addresses: ["10.0.0.1"] }),
      ),
    );
    const dir = stateDir("gather-peers", "llmgw_node_abc");
    const nodesConfig = join(
      tree("imex-etc", { "nodes_config.cfg": "# trays\n10.0.0.2\n10.0.0.1\n" }),
      "nodes_config.cfg",
    );
    const cfg = cfgWith(
      `server: ${CP}\nnode_id: gpu-01\nstate_dir: ${dir}\nengines: {}\nimex_ctl: ${join(dir, "none")}\nimex_nodes_config: ${nodesConfig}\n`,
    );
    const input = await gatherDoctorInput({
      cfg,
      nvidiaSmi: join(dir, "no-nvidia-smi"),
      ibRoot: join(dir, "no-ib"),
      hostRoot: tree("gdr-none", {}),
      loadNvml: () => {
        throw new Error("no library here");
      },
    });
    expect(input.imexConfig).toEqual({ path: nodesConfig, kind: "read", addresses: ["10.0.0.1", "10.0.0.2"] });
    expect(input.gpudirect).toEqual({ peermem: false, nvPeerMem: false });
    expect(input.server?.token).toEqual({ kind: "accepted", nodeId: "gpu-01" });
    expect(input.server?.peers).toEqual({ ok: true, domain: "d", addresses: ["10.0.0.1"] });
  });

  it("runs discovery with the flags' overrides and probes NVML and the control plane", async () => {
    server.use(http.get(`${CP}/healthz`, () => HttpResponse.json({ status: "ok", version: "0.1.0" })));
    const dir = stateDir("gather");
    const cfg = cfgWith(
      `server: ${CP}\nstate_dir: ${dir}\nengines: {}\nimex_ctl: ${join(dir, "no-imex-ctl")}\nfabrics: [{name: ib-east, hcas: [mlx5_0]}]\n`,
    );
    const input = await gatherDoctorInput({
      cfg,
      nvidiaSmi: join(dir, "no-nvidia-smi"),
      ibRoot: join(FIXTURES, "ib-sysfs", "gpud-h100-sys-class-infiniband"),
      loadNvml: () => {
        throw new Error("no library here");
      },
    });
    expect(input.inventory.gpuSource).toBe("unavailable");
    expect(input.inventory.hcas.map((h) => h.name)).toContain("mlx5_0");
    expect(input.config).toEqual({
      fabrics: [{ name: "ib-east", hcas: ["mlx5_0"] }],
      nvml: false,
      commandEngine: false,
      stateDir: dir,
      imexChannelsDir: "/dev/nvidia-caps-imex-channels",
      slowdownC: 87,
    });
    expect(input.nvml).toEqual({ ok: false, error: "no library here" });
    expect(input.server).toMatchObject({
      url: CP,
      health: { ok: true, version: "0.1.0" },
      token: { kind: "none", joinToken: false },
    });
    expect(input.server?.peers).toBeUndefined();
  });

  it("gathers no control-plane probe without a server", async () => {
    const input = await gatherDoctorInput({
      cfg: cfgWith(
        `state_dir: ${stateDir("no-server")}\nengines: {}\nimex_nodes_config: ${join(tmp.dir, "no-nodes-config")}\n`,
      ),
      nvidiaSmi: join(tmp.dir, "none"),
      ibRoot: join(tmp.dir, "no-ib"),
      loadNvml: () => ({ snapshot: () => ({ driverVersion: "1", cudaVersion: "1", gpus: [] }) }),
    });
    expect(input.server).toBeUndefined();
    expect(input.imexConfig).toMatchObject({ kind: "absent" });
  });
});
