import { describe, expect, it } from "vitest";
import type { ServerProbe, TokenProbe } from "../../../agent/doctor/input.js";
import {
  checkClockSkew,
  checkControlPlane,
  checkDiscovery,
  checkEngines,
  checkNodeToken,
} from "../../../agent/doctor/node-checks.js";
import type { Inventory } from "../../../shared/schemas/inventory.js";
import { VERSION } from "../../../shared/version.js";
import { H100_XML, inventoryOf, serverOk } from "./inputs.js";

const h100 = () => inventoryOf(H100_XML);
const engines = (e: Inventory["engines"]): Inventory => ({ ...h100(), engines: e });
const STATE = "/var/lib/llmgw";

describe("engines", () => {
  it.each([
    [
      "vllm found",
      engines({ probed: ["vllm", "sglang"], versions: { vllm: "0.11.0" } }),
      false,
      "ok",
      /^vllm 0\.11\.0; not found: sglang$/,
    ],
    [
      "nothing found",
      engines({ probed: ["vllm", "sglang", "llamacpp", "trtllm"], versions: {} }),
      false,
      "warn",
      /^no inference engine found \(probed vllm, sglang, llamacpp, trtllm\)$/,
    ],
    [
      "a probe ran out of time",
      engines({
        probed: ["vllm", "sglang"],
        versions: { sglang: "0.5.19" },
        warnings: { vllm: "no answer within 5 s from vllm --version: vllm may be installed; …" },
      }),
      false,
      "warn",
      /^sglang 0\.5\.19; vllm: no answer within 5 s from vllm --version/,
    ],
    ["agent.yaml lists no engine", engines({ probed: [], versions: {} }), false, "warn", /no engine probed/],
    ["only the command engine", engines({ probed: [], versions: {} }), true, "ok", /^command \(from agent.yaml\)$/],
  ])("%s → %s", (_, inv, command, status, finding) => {
    expect(checkEngines(inv, command)).toMatchObject({
      id: "engines",
      status,
      finding: expect.stringMatching(finding),
    });
  });
});

describe("discovery", () => {
  const withErrors = (errors: Inventory["errors"]) => ({ ...h100(), errors });
  it.each([
    ["every source read", withErrors([]), "ok"],
    [
      "topo -m failed",
      withErrors([{ source: "nvidia-smi topo -m", message: "nvidia-smi topo -m: exited with status 2" }]),
      "warn",
    ],
    [
      "IMEX ctl answered garbage",
      withErrors([{ source: "nvidia-imex-ctl -q", message: "nvidia-imex-ctl -q: unexpected output" }]),
      "warn",
    ],
    [
      "only sources other checks judge",
      withErrors([
        { source: "nvidia-smi -q -x", message: "x" },
        { source: "nvml", message: "y" },
        { source: "agent.yaml fabrics", message: "z" },
      ]),
      "ok",
    ],
    [
      "no driver: topo -m and -L fail alike",
      {
        ...withErrors([
          { source: "nvidia-smi topo -m", message: "x" },
          { source: "nvidia-smi -L", message: "y" },
        ]),
        gpuSource: "unavailable" as const,
        gpus: [],
      },
      "ok",
    ],
  ])("%s → %s", (_, inv, status) => {
    expect(checkDiscovery(inv).status).toBe(status);
  });

  it("names the source", () => {
    expect(
      checkDiscovery(withErrors([{ source: "nvidia-smi topo -m", message: "no answer within 10000 ms" }])).finding,
    ).toBe("could not read nvidia-smi topo -m: no answer within 10000 ms");
  });
});

describe("control-plane", () => {
  it.each([
    ["no server configured", undefined, "skip", /^no control plane configured$/],
    ["answers", serverOk(), "ok", new RegExp(`^https://cp\\.lab/healthz answers in 3 ms: llmgw ${VERSION}$`)],
    [
      "answers with another version",
      serverOk({ health: { ok: true, version: "9.9.9", rttMs: 12, localMs: 0 } }),
      "ok",
      /llmgw 9\.9\.9 \(this node runs /,
    ],
    [
      "unreachable",
      serverOk({ health: { ok: false, error: "GET /healthz: cannot reach it: ECONNREFUSED" } }),
      "fail",
      /^https:\/\/cp\.lab: GET \/healthz: cannot reach it: ECONNREFUSED$/,
    ],
  ])("%s → %s", (_, server, status, finding) => {
    expect(checkControlPlane(server)).toMatchObject({
      id: "control-plane",
      status,
      finding: expect.stringMatching(finding),
    });
  });

  it("without a server, says how to set one", () => {
    expect(checkControlPlane(undefined).fix).toMatch(/--server URL/);
  });
});

describe("node-token", () => {
  const withToken = (token: TokenProbe): ServerProbe => serverOk({ token });
  it.each([
    ["no server configured", undefined, "skip", /no control plane configured/],
    ["accepted", withToken({ kind: "accepted", nodeId: "gpu-01" }), "ok", /^the node token of gpu-01 is accepted$/],
    [
      "unknown to the control plane (401)",
      withToken({ kind: "refused", nodeId: "gpu-01", status: 401, message: "HTTP 401: unknown node token" }),
      "fail",
      /^node gpu-01: HTTP 401/,
    ],
    [
      "another node's token (403)",
      withToken({
        kind: "refused",
        nodeId: "gpu-01",
        status: 403,
        message: "HTTP 403: this node token belongs to node gpu-02",
      }),
      "fail",
      /belongs to node gpu-02/,
    ],
    [
      "the control plane erred (503)",
      withToken({ kind: "refused", nodeId: "gpu-01", status: 503, message: "HTTP 503: database unreachable" }),
      "warn",
      /503/,
    ],
    [
      "not registered, join token configured",
      withToken({ kind: "none", joinToken: true }),
      "skip",
      /^not registered yet \(no \/var\/lib\/llmgw\/node-token\)/,
    ],
    ["not registered, no join token", withToken({ kind: "none", joinToken: false }), "fail", /cannot register/],
    [
      "token file unreadable",
      withToken({ kind: "unreadable", error: "EACCES" }),
      "fail",
      /^cannot read \/var\/lib\/llmgw\/node-token: EACCES$/,
    ],
    [
      "control plane down",
      serverOk({ health: { ok: false, error: "x" }, token: { kind: "unchecked", nodeId: "gpu-01" } }),
      "skip",
      /not checked/,
    ],
  ])("%s → %s", (_, server, status, finding) => {
    expect(checkNodeToken(server, STATE)).toMatchObject({
      id: "node-token",
      status,
      finding: expect.stringMatching(finding),
    });
  });

  it("a 401 says to remove the token and register again; a 403 points at node_id", () => {
    expect(checkNodeToken(withToken({ kind: "refused", nodeId: "n", status: 401, message: "m" }), STATE).fix).toMatch(
      /remove \/var\/lib\/llmgw\/node-token/,
    );
    expect(checkNodeToken(withToken({ kind: "refused", nodeId: "n", status: 403, message: "m" }), STATE).fix).toMatch(
      /node_id/,
    );
  });
});

describe("clock-skew", () => {
  const DATE = "Thu, 15 Jan 2026 10:00:00 GMT";
  const at = (iso: string) => Date.parse(iso);
  it.each([
    ["no server configured", undefined, "skip", /no control plane configured/],
    ["control plane down", serverOk({ health: { ok: false, error: "x" } }), "skip", /did not answer/],
    [
      "no Date header",
      serverOk({ health: { ok: true, rttMs: 1, localMs: at("2026-01-15T10:00:00Z") } }),
      "skip",
      /no usable Date header/,
    ],
    [
      "in step (same second)",
      serverOk({}, at("2026-01-15T10:00:00.400Z"), DATE),
      "ok",
      /^local clock within 1 s of the control plane$/,
    ],
    [
      "4 s ahead",
      serverOk({}, at("2026-01-15T10:00:04.500Z"), DATE),
      "ok",
      /^local clock 4\.0 s ahead of the control plane$/,
    ],
    [
      "62 s behind",
      serverOk({}, at("2026-01-15T09:58:58.500Z"), DATE),
      "warn",
      /^local clock 62\.0 s behind the control plane \(warn above 5 s\)$/,
    ],
    ["an hour ahead", serverOk({}, at("2026-01-15T11:00:00.500Z"), DATE), "warn", /3600\.0 s ahead/],
  ])("%s → %s", (_, server, status, finding) => {
    expect(checkClockSkew(server)).toMatchObject({ id: "clock-skew", status, finding: expect.stringMatching(finding) });
  });

  it("suggests time sync", () => {
    expect(checkClockSkew(serverOk({}, at("2026-01-15T11:00:00Z"), DATE)).fix).toMatch(/timedatectl set-ntp true/);
  });
});
