// `llmgw doctor` as a real process on the fake nvidia-smi (real captures), a fixture IB sysfs tree, and a tiny
// node:http control plane: the JSON is schema-checked and the exit status matches the checks.
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { DoctorReport } from "../../shared/schemas/doctor.js";
import { FAKE_SMI, HGX_SMI, IB_ROOT } from "../helpers/agents.js";
import { tempDir } from "../helpers/db.js";
import { FIXTURES } from "../helpers/inventory.js";
import { runLlmgw } from "../helpers/process.js";

const tmp = tempDir();
const GB200_SMI = {
  ...HGX_SMI,
  FAKE_SMI_XML: join(FIXTURES, "smi-xml", "gb200-4gpu-nvl-fabric-clique2-580.173.02-k8stestinfra.xml"),
};
const TOKEN = "llmgw_node_doctor";

/** A control plane: /healthz with a Date `skewS` seconds off, and the assignments poll for TOKEN on node n1 only. */
async function controlPlane(skewS: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const date = new Date(Date.now() + skewS * 1000).toUTCString();
    if (req.url === "/healthz") {
      res
        .writeHead(200, { "content-type": "application/json", date })
        .end(JSON.stringify({ status: "ok", version: "0.1.0" }));
    } else if (
      req.url?.startsWith("/api/v1/agents/n1/assignments?") &&
      req.headers.authorization === `Bearer ${TOKEN}`
    ) {
      res
        .writeHead(200, { "content-type": "application/json", "x-llmgw-index": "1" })
        .end(JSON.stringify({ index: 1, shards: [] }));
    } else {
      const body = {
        type: "urn:llmgw:problem:unauthorized",
        title: "Unauthorized",
        status: 401,
        detail: "unknown node token",
        code: "unauthorized",
        requestId: "r1",
      };
      res.writeHead(401, { "content-type": "application/problem+json" }).end(JSON.stringify(body));
    }
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

let inStep: Awaited<ReturnType<typeof controlPlane>>;
let anHourAhead: Awaited<ReturnType<typeof controlPlane>>;
beforeAll(async () => {
  [inStep, anHourAhead] = await Promise.all([controlPlane(0), controlPlane(3600)]);
});
afterAll(async () => {
  await Promise.all([inStep, anHourAhead].map((cp) => new Promise((ok) => cp.server.close(ok))));
  tmp.cleanup();
});

/** Writes an agent.yaml for node n1 with its own state dir (holding `token` when given); returns its path. */
function agentYaml(name: string, extra: Record<string, unknown> = {}, token?: string): string {
  const stateDir = join(tmp.dir, `state-${name}`);
  mkdirSync(stateDir, { recursive: true });
  if (token) writeFileSync(join(stateDir, "node-token"), `${token}\n`);
  const path = join(tmp.dir, `${name}.yaml`);
  writeFileSync(
    path,
    stringify({
      node_id: "n1",
      join_token: "llmgw_join_x",
      state_dir: stateDir,
      imex_ctl: join(tmp.dir, "no-imex-ctl"),
      imex_channels_dir: join(tmp.dir, "no-channels"),
      imex_nodes_config: join(tmp.dir, "no-nodes-config.cfg"),
      fabrics: [{ name: "ib-east", hcas: ["mlx5_0", "mlx5_1"] }],
      engines: { vllm: { probe: [process.execPath, "-e", "console.log('0.11.0')"] } },
      ...extra,
    }),
  );
  return path;
}

/** Runs `llmgw doctor --json` and parses its report with the shared schema. */
async function doctor(args: string[], env: Record<string, string> = HGX_SMI) {
  const r = await runLlmgw(["doctor", "--json", "--nvidia-smi", FAKE_SMI, "--ib-root", IB_ROOT, ...args], { env });
  const report = DoctorReport.parse(JSON.parse(r.output));
  return {
    code: r.code,
    report,
    status: (id: string) => report.checks.find((c) => c.id === id)?.status,
    check: (id: string) => report.checks.find((c) => c.id === id),
  };
}

describe("llmgw doctor", () => {
  it("passes a healthy HGX node whose control plane knows its token (exit 0)", async () => {
    const r = await doctor(["--config", agentYaml("healthy", {}, TOKEN), "--server", inStep.url]);
    expect(r.report.summary.fail).toBe(0);
    expect(r.code).toBe(0);
    expect(r.check("driver")).toMatchObject({
      status: "ok",
      finding: "driver 580.105.08 (CUDA 13.0): 8 GPUs via nvidia-smi",
    });
    expect(r.check("nvlink-fabric")?.finding).toMatch(/single-machine NVSwitch .*not a multi-node domain/);
    expect(r.status("imex")).toBe("skip");
    expect(r.check("ib-fabrics")).toMatchObject({
      status: "ok",
      finding: "ib-east: mlx5_0 port 1 ACTIVE, mlx5_1 port 1 ACTIVE",
    });
    expect(r.status("imex-peers")).toBe("skip");
    // nvidia_peermem and the kernel module are the test machine's own: either verdict, never a failure
    expect(["ok", "warn"]).toContain(r.status("gpudirect-rdma"));
    expect(r.check("engines")).toMatchObject({ status: "ok", finding: "vllm 0.11.0" });
    expect(r.status("control-plane")).toBe("ok");
    expect(r.check("node-token")).toMatchObject({ status: "ok", finding: "the node token of n1 is accepted" });
    expect(r.status("clock-skew")).toBe("ok");
  });

  it("fails on an HCA agent.yaml names but the node lacks, a refused token, and warns on clock skew (exit 1)", async () => {
    const config = agentYaml(
      "broken",
      { fabrics: [{ name: "ib-east", hcas: ["mlx5_0", "mlx5_3"] }] },
      "llmgw_node_stale",
    );
    const r = await doctor(["--config", config, "--server", anHourAhead.url]);
    expect(r.code).toBe(1);
    expect(r.check("ib-fabrics")).toMatchObject({
      status: "fail",
      finding: expect.stringContaining("fabric ib-east names mlx5_3, which this node does not have"),
    });
    expect(r.check("node-token")).toMatchObject({
      status: "fail",
      finding: expect.stringContaining("unknown node token"),
    });
    expect(r.check("clock-skew")).toMatchObject({
      status: "warn",
      finding: expect.stringMatching(/behind the control plane/),
    });
  });

  it("fails a GB200 tray in an NVLink domain without IMEX; skips the control plane without a server", async () => {
    const r = await doctor(["--config", agentYaml("gb200")], GB200_SMI);
    expect(r.code).toBe(1);
    expect(r.check("nvlink-fabric")).toMatchObject({
      status: "ok",
      finding: expect.stringMatching(/^domain 00000001-.*\.2: all 4 GPUs joined/),
    });
    expect(r.check("imex")).toMatchObject({ status: "fail", finding: expect.stringMatching(/^IMEX absent/) });
    expect(r.status("imex-channel")).toBe("fail");
    expect(r.check("imex-peers")?.finding).toMatch(/^no .*no-nodes-config\.cfg, and IMEX is not installed/);
    expect(["control-plane", "node-token", "clock-skew"].map(r.status)).toEqual(["skip", "skip", "skip"]);
  });

  it("fails without a driver, and still reports the rest", async () => {
    const r = await doctor(["--config", agentYaml("no-driver")], {});
    expect(r.code).toBe(1);
    expect(r.check("driver")).toMatchObject({
      status: "fail",
      finding: expect.stringContaining("couldn't communicate with the NVIDIA driver"),
    });
    expect(r.status("gpu-ecc")).toBe("skip");
    expect(r.status("ib-ports")).toBe("ok");
    expect(r.status("discovery")).toBe("ok");
  });

  it("prints a table by default", async () => {
    const r = await runLlmgw(
      ["doctor", "--nvidia-smi", FAKE_SMI, "--ib-root", IB_ROOT, "--config", agentYaml("table")],
      { env: HGX_SMI },
    );
    expect(r.code).toBe(0);
    expect(r.output).toMatch(/^CHECK +STATUS +FINDING\n/);
    expect(r.output).toMatch(/^driver +ok +driver 580\.105\.08/m);
    expect(r.output).toMatch(
      /^control-plane +skip +no control plane configured\n +fix: set `server` in agent.yaml or pass --server URL$/m,
    );
    expect(r.output).toMatch(/\n19 checks: .*\n$/);
  });

  it.each([
    [
      "an invalid agent.yaml",
      () => {
        const bad = join(tmp.dir, "bad.yaml");
        writeFileSync(bad, stringify({ fabrics: [{ name: "ib" }], colour: "blue" }));
        return ["--config", bad];
      },
      /invalid configuration/,
    ],
    ["a missing agent.yaml", () => ["--config", join(tmp.dir, "absent.yaml")], /ENOENT/],
    ["an unknown flag", () => ["--colour"], /unknown option '--colour'/],
    ["a server that is not a URL", () => ["--server", "cp.lab:8080"], /--server cp\.lab:8080: not an http\(s\) URL/],
  ])("exits 2 on %s", async (_, args, message) => {
    const r = await runLlmgw(["doctor", ...args()]);
    expect(r.code).toBe(2);
    expect(r.output).toMatch(message);
  });
});
