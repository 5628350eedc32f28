import { describe, expect, it } from "vitest";
import {
  ago,
  classList,
  formatLogs,
  formatNode,
  formatNodes,
  formatPlan,
  formatReplicas,
  formatStatus,
  grid,
  when,
} from "../../../agent/ctl/format.js";
import {
  expiry,
  formatAdminTokens,
  formatApiKeys,
  formatApplied,
  formatDeployments,
  formatJoinTokens,
  formatModels,
  secretOutput,
} from "../../../agent/ctl/format-resources.js";
import type { ApiKey } from "../../../shared/schemas/api-key.js";
import type { Deployment } from "../../../shared/schemas/deployment.js";
import { failureText } from "../../../shared/schemas/failure.js";
import type { Model } from "../../../shared/schemas/model.js";
import type { Node, NodeSummary } from "../../../shared/schemas/node.js";
import type { Capacity } from "../../../shared/schemas/plan.js";
import type { ReplicaView } from "../../../shared/schemas/replica.js";
import type { z } from "../../../shared/z.js";
import { inventoryFromCapture } from "../../helpers/inventory.js";

const NOW = Date.UTC(2025, 10, 30, 17, 40);
const S = 1000;
const lines = (s: string) => s.trimEnd().split("\n");
/** The cells of the line whose first cell is `first`, split on runs of two or more spaces. */
const row = (s: string, first: string) =>
  s
    .split("\n")
    .map((l) => l.trim().split(/\s{2,}/))
    .find((c) => c[0] === first);
const metadata = (version: number) => ({
  version,
  etag: `"${version}"`,
  createdAt: NOW - 3600 * S,
  updatedAt: NOW - 60 * S,
});

function summary(id: string, over: Partial<z.infer<typeof NodeSummary>> = {}): z.infer<typeof NodeSummary> {
  return {
    id,
    hostname: `${id}.lab`,
    mgmtAddr: "10.0.0.11",
    pool: "prod",
    labels: { pool: "prod" },
    state: "ready",
    adminState: "ready",
    agentVersion: "0.1.0",
    registeredAt: NOW - 86400 * S,
    lastHeartbeatAt: NOW - 20 * S,
    lastSeenAt: NOW - 5 * S,
    classes: { "h100-80g": 8 },
    ...over,
  };
}

describe("small helpers", () => {
  it.each([
    [null, "never"],
    [NOW, "0s ago"],
    [NOW - 5 * S, "5s ago"],
    [NOW - 119 * S, "119s ago"],
    [NOW - 300 * S, "5m ago"],
    [NOW - 3 * 3600 * S, "3h ago"],
    [NOW - 3 * 86400 * S, "3d ago"],
    [NOW + 10 * S, "0s ago"],
  ])("ago(%s)", (at, want) => expect(ago(at, NOW)).toBe(want));

  it.each([
    [undefined, "never"],
    [null, "never"],
    [NOW + 3600 * S, "in 60m"],
    [NOW + 5 * 86400 * S, "in 5d"],
    [NOW - 10 * S, "expired 10s ago"],
    [NOW, "expired 0s ago"],
  ])("expiry(%s)", (at, want) => expect(expiry(at, NOW)).toBe(want));

  it("writes moments to the minute in UTC", () => expect(when(NOW)).toBe("2025-11-30 17:40Z"));

  it.each([
    [{ "h100-80g": 8 }, "h100-80g × 8"],
    [
      { "a100-80g-mig-1g.10gb": 7, "a100-80g-mig-3g.40gb": 2, "a100-80g": 0 },
      "a100-80g-mig-1g.10gb × 7, a100-80g-mig-3g.40gb × 2",
    ],
    [{ b: 2, a: 2 }, "a × 2, b × 2"],
    [{}, "-"],
  ])("classList(%j)", (classes, want) => expect(classList(classes)).toBe(want));

  it("says `none` instead of an empty table", () => {
    expect(grid(["A", "B"], [], "no things")).toEqual(["no things"]);
    expect(grid(["A", "B"], [["x", "y"]], "no things", "  ")).toEqual(["  A  B", "  x  y"]);
  });
});

describe("formatNodes", () => {
  it("prints a node a line with its devices counted by class", () => {
    const out = formatNodes(
      [
        summary("gpu-node-01"),
        summary("mig-01", {
          state: "lost",
          pool: "default",
          classes: { "a100-80g-mig-3g.40gb": 2, "a100-80g-mig-1g.10gb": 1 },
          lastSeenAt: NOW - 600 * S,
        }),
        summary("empty", { classes: {} }),
      ],
      NOW,
    );
    expect(lines(out)[0]).toMatch(/^NODE +STATE +POOL +DEVICES +LAST SEEN$/);
    expect(row(out, "gpu-node-01")).toEqual(["gpu-node-01", "ready", "prod", "h100-80g × 8", "5s ago"]);
    expect(row(out, "mig-01")).toEqual([
      "mig-01",
      "lost",
      "default",
      "a100-80g-mig-3g.40gb × 2, a100-80g-mig-1g.10gb × 1",
      "10m ago",
    ]);
    expect(row(out, "empty")?.[3]).toBe("-");
  });

  it("says when there are none", () => expect(formatNodes([], NOW)).toBe("no nodes\n"));
});

describe("formatNode", () => {
  const inventory = inventoryFromCapture("smi-xml/gb200-4gpu-nvl-fabric-clique2-580.173.02-k8stestinfra.xml");
  const node: z.infer<typeof Node> = {
    ...summary("gb-01", { state: "cordoned", adminState: "cordoned", classes: { "gb200-185g": 4 } }),
    mgmtInterface: "eth0",
    devices: inventory.gpus.map((g) => ({
      id: g.index,
      label: String(g.index),
      class: g.class,
      uuid: g.uuid,
      memoryTotalMiB: g.memoryTotalMiB,
    })),
    shards: [
      {
        shardId: "r1-s0",
        replicaId: "r1",
        state: "loading",
        message: "loading weights",
        updatedAt: NOW - 30 * S,
        transport: null,
      },
    ],
    inventory: {
      ...inventory,
      gpus: inventory.gpus.map((g, i) =>
        i === 2 ? { ...g, health: { ...g.health, problems: ["2 retired pages pending"] } } : g,
      ),
    },
  };
  const out = formatNode(node, NOW);

  it("heads with the node's identity and state", () => {
    expect(lines(out)[0]).toBe("node gb-01 (gb-01.lab, 10.0.0.11 on eth0)");
    expect(out).toContain("state      cordoned; last seen 5s ago, last heartbeat 20s ago");
    expect(out).toContain("devices    gb200-185g × 4");
  });

  it("shows each GPU with its class, health and NVLink fabric", () => {
    const gpu0 = row(out, "0")!;
    expect(gpu0.slice(2, 4)).toEqual(["gb200-185g", "185 GiB"]);
    expect(gpu0.at(-1)).toMatch(/^joined [0-9a-f-]+\.2$/);
    expect(row(out, "2")).toContain("2 retired pages pending");
  });

  it("lists the placeable devices and the shards", () => {
    expect(out).toMatch(/Devices\n {2}DEVICE +CLASS +MEMORY +UUID\n {2}0 +gb200-185g/);
    expect(row(out, "r1-s0")).toEqual(["r1-s0", "r1", "loading", "30s ago", "loading weights"]);
  });

  it("says so when a node has nothing", () => {
    const bare = formatNode({ ...node, devices: [], shards: [], inventory: { ...node.inventory, gpus: [] } }, NOW);
    expect(bare).toContain("GPUs (0, via nvidia-smi)\n  none\n");
    expect(bare).toContain("Devices\n  none placeable\n");
    expect(bare).toContain("Shards\n  none\n");
  });
});

const deployment = (
  name: string,
  over: Partial<z.infer<typeof Deployment>["status"]> = {},
  pool?: string,
): z.infer<typeof Deployment> => ({
  name,
  spec: { model: "llama-8b", replicas: 2, ...(pool ? { pool } : {}) },
  status: { phase: "Starting", desired: 2, placed: 2, ready: 1, pending: [], ...over },
  metadata: metadata(3),
});
const replica = (
  id: string,
  state: "ready" | "degraded" | "starting" | "failed",
  endpoint: string | null,
): z.infer<typeof ReplicaView> => ({
  id,
  deployment: "chat",
  profile: "tp2",
  fingerprint: "f",
  createdAt: NOW,
  state,
  endpoint,
  shards: [
    {
      shardId: `${id}-s0`,
      nodeId: "gpu-node-01",
      rank: 0,
      devices: ["0", "1"],
      httpPort: 20000,
      fabric: "single",
      state: state === "ready" ? "ready" : "unknown",
      message: null,
      lastFailure: null,
      failure: null,
      transport: null,
    },
    {
      shardId: `${id}-s1`,
      nodeId: "gpu-node-02",
      rank: 1,
      devices: ["0", "1"],
      httpPort: 20000,
      fabric: "single",
      state: "ready",
      message: null,
      lastFailure: null,
      failure: null,
      transport: null,
    },
  ],
});

describe("formatStatus", () => {
  it("shows desired / placed / ready, the pending reasons, and the replicas", () => {
    const out = formatStatus(
      [
        deployment("chat", {}, "prod"),
        deployment("ghost", {
          phase: "Pending",
          desired: 3,
          placed: 1,
          ready: 0,
          pending: [{ count: 2, reason: "no node in pool default has 2 free h100-80g" }],
        }),
      ],
      [replica("r1", "ready", "http://10.0.0.11:20000"), replica("r2", "starting", null)],
    );
    expect(row(out, "chat")).toEqual(["chat", "llama-8b", "prod", "Starting", "2", "2", "1"]);
    expect(row(out, "ghost")).toEqual(["ghost", "llama-8b", "default", "Pending", "3", "1", "0"]);
    expect(out).toMatch(/\nPending\n {2}ghost {2}2 pending {2}no node in pool default has 2 free h100-80g\n/);
    expect(row(out, "r1")).toEqual([
      "r1",
      "chat",
      "tp2",
      "ready",
      "http://10.0.0.11:20000",
      "gpu-node-01[0,1] ready, gpu-node-02[0,1] ready",
    ]);
    expect(row(out, "r2")?.slice(3, 5)).toEqual(["starting", "-"]);
  });

  it("says why a Failed deployment waits and how each failed shard last stopped", () => {
    const f = {
      reason: "exit 1",
      exitCode: 1,
      ranS: 3,
      restart: 5,
      restartLimit: 5,
      gaveUp: true,
      logTail: ["RuntimeError: CUDA error: out of memory"],
      at: NOW,
    };
    const why = "failed 2 times in a row past the restart limit (last: exit 1); next try at 12:01:00 UTC";
    const bad = replica("r3", "failed", null);
    bad.shards[0] = { ...bad.shards[0]!, state: "failed", lastFailure: f, failure: failureText(f) };
    const out = formatStatus(
      [
        deployment("chat", {
          phase: "Failed",
          desired: 1,
          placed: 0,
          ready: 0,
          pending: [{ count: 1, reason: why }],
          failure: why,
        }),
      ],
      [bad],
    );
    expect(out).toContain(`\nFailed\n  chat  Failed  ${why}\n`);
    expect(out).not.toContain("Pending");
    expect(out).toContain(
      "\nFailures\n  r3/r3-s0  failed:  exit 1 after 3 s (gave up after 5 restarts): RuntimeError: CUDA error: out of memory\n",
    );
  });

  it("says which shard's NCCL is not on the transport it was placed for, and why", () => {
    const reason = "placed on ib:fabric-a (mlx5_0,mlx5_1); NCCL uses NET/Socket on eth0";
    const r = replica("r4", "degraded", "http://10.0.0.11:20000");
    r.shards[1] = {
      ...r.shards[1]!,
      fabric: "ib:fabric-a",
      transport: { verdict: "degraded", expected: "ib:fabric-a (mlx5_0,mlx5_1)", via: "NET/Socket", reason },
    };
    r.shards[0] = {
      ...r.shards[0]!,
      fabric: "ib:fabric-a",
      transport: { verdict: "ok", expected: "ib:fabric-a (mlx5_0,mlx5_1)", via: "NET/IB" },
    };
    const out = formatStatus([deployment("chat", {})], [r]);
    expect(row(out, "r4")?.[3]).toBe("degraded");
    expect(out).toContain(`\nTransport\n  r4/r4-s1  degraded:  ${reason}\n`);
    expect(out).not.toContain("r4/r4-s0  ok");
  });

  it("prints a replica's failures with their log lines, for one shard when asked", () => {
    const f = {
      reason: "killed by SIGKILL",
      signal: "SIGKILL",
      ranS: 60,
      restart: 2,
      restartLimit: 5,
      gaveUp: false,
      logTail: ["a", "b"],
      at: NOW,
    };
    const logs = {
      replica: "r3",
      shards: [
        { shardId: "r3-s0", nodeId: "n1", state: "pending", failure: f, text: failureText(f) },
        { shardId: "r3-s1", nodeId: "n2", state: "ready", failure: null, text: null },
      ],
    };
    expect(formatLogs(logs)).toBe(
      "r3-s0 on n1, pending: killed by SIGKILL after 60 s (restart 2 of 5): b\n  a\n  b\nr3-s1 on n2, ready: no failure reported\n",
    );
    expect(formatLogs(logs, "s1")).toBe("r3-s1 on n2, ready: no failure reported\n");
    expect(formatLogs(logs, "s9")).toBe("replica r3 has no shard s9\n");
  });

  it("ends with the devices by class, MIG classes as their own rows, as ctl plan shows them", () => {
    const out = formatStatus(
      [deployment("chat")],
      [],
      [
        { class: "h100-80g", total: 16, free: 6, used: 2, unavailable: [{ count: 8, reason: "node cordoned" }] },
        {
          class: "a100-80g-mig-1g.20gb",
          total: 4,
          free: 3,
          used: 0,
          unavailable: [{ count: 1, reason: "in use by another process: python3 (pid 4242)" }],
        },
      ],
    );
    expect(out).toMatch(/\n\nCLASS +TOTAL +FREE +USED +UNAVAILABLE\n/);
    expect(row(out, "h100-80g")).toEqual(["h100-80g", "16", "6", "2", "8 node cordoned"]);
    expect(row(out, "a100-80g-mig-1g.20gb")?.slice(0, 4)).toEqual(["a100-80g-mig-1g.20gb", "4", "3", "0"]);
    expect(formatStatus([], [], [])).toBe("no deployments\n\nno replicas\n\nno devices\n");
  });

  it("says when there is nothing", () => expect(formatStatus([], [])).toBe("no deployments\n\nno replicas\n"));
  it("has no Pending section when nothing is pending", () =>
    expect(formatStatus([deployment("chat")], [])).not.toContain("Pending\n"));
});

describe("formatReplicas", () => {
  it("prints a replica a line", () => {
    expect(row(formatReplicas([replica("r1", "failed", "http://x:1")]), "r1")?.slice(0, 5)).toEqual([
      "r1",
      "chat",
      "tp2",
      "failed",
      "http://x:1",
    ]);
    expect(formatReplicas([])).toBe("no replicas\n");
  });
});

describe("formatPlan", () => {
  const cap: Capacity = {
    classes: [
      { class: "h100-80g", total: 16, free: 6, used: 2, unavailable: [{ count: 8, reason: "node cordoned" }] },
      { class: "a100-80g-mig-3g.40gb", total: 2, free: 2, used: 0, unavailable: [] },
    ],
    profiles: [
      {
        model: "llama-8b",
        profile: "one-h100",
        gpuClass: "h100-80g",
        pool: "prod",
        fits: 6,
        nodes: { "gpu-node-01": 4, "gpu-node-02": 2 },
      },
      {
        model: "llama-70b",
        profile: "tp8",
        gpuClass: "h100-80g",
        pool: "prod",
        fits: 0,
        nodes: {},
        reason: "no node has 8 free h100-80g",
      },
    ],
  };
  const out = formatPlan(cap);
  it("shows devices by class with why some are unavailable", () => {
    expect(row(out, "h100-80g")).toEqual(["h100-80g", "16", "6", "2", "8 node cordoned"]);
    expect(row(out, "a100-80g-mig-3g.40gb")?.at(-1)).toBe("-");
  });
  it("shows what more fits, where, or why not", () => {
    expect(row(out, "llama-8b")).toEqual([
      "llama-8b",
      "one-h100",
      "h100-80g",
      "prod",
      "6",
      "gpu-node-01 × 4, gpu-node-02 × 2",
    ]);
    expect(row(out, "llama-70b")?.at(-1)).toBe("no node has 8 free h100-80g");
  });
  it("says when there is nothing", () =>
    expect(formatPlan({ classes: [], profiles: [] })).toBe("no devices\n\nno model profiles\n"));
});

describe("resource tables", () => {
  it("formatModels", () => {
    const m: z.infer<typeof Model> = {
      name: "llama-70b",
      spec: {
        servedName: "meta-llama/Llama-3.1-70B-Instruct",
        weightsPath: "/m",
        profiles: [
          { name: "tp8", engine: "vllm", gpuClass: "h100-80g", tp: 8, gpusPerNode: 8 },
          { name: "gb", engine: "sglang", gpuClass: "gb200-185g" },
        ],
      },
      status: { deployments: ["chat", "batch"] },
      metadata: metadata(2),
    };
    expect(row(formatModels([m]), "llama-70b")).toEqual([
      "llama-70b",
      "meta-llama/Llama-3.1-70B-Instruct",
      "tp8 (vllm, h100-80g), gb (sglang, gb200-185g)",
      "2",
      "chat, batch",
    ]);
    expect(formatModels([])).toBe("no models\n");
  });

  it("formatDeployments", () => {
    expect(row(formatDeployments([deployment("chat")]), "chat")).toEqual([
      "chat",
      "llama-8b",
      "default",
      "Starting",
      "1/2",
      "3",
    ]);
  });

  it("formatApiKeys: models, limits, expiry, never the secret", () => {
    const key = (name: string, spec: ApiKey["spec"]): ApiKey => ({
      name,
      spec,
      status: { expired: false, secretIssuedAt: NOW - 120 * S },
      metadata: metadata(1),
    });
    const out = formatApiKeys(
      [
        key("all", {}),
        key("none", { models: [] }),
        key("team", { models: ["a", "b"], requestsPerMinute: 600, tokensPerMinute: 200000, expiresAt: NOW - S }),
      ],
      NOW,
    );
    expect(row(out, "all")).toEqual(["all", "all", "-", "-", "never", "2m ago", "1"]);
    expect(row(out, "none")?.[1]).toBe("none");
    expect(row(out, "team")).toEqual(["team", "a, b", "600", "200000", "expired 1s ago", "2m ago", "1"]);
  });

  it("formatAdminTokens and formatJoinTokens", () => {
    expect(
      row(
        formatAdminTokens([{ id: "tok_1", name: "ci", role: "viewer", createdAt: NOW, lastUsedAt: null }], NOW),
        "tok_1",
      ),
    ).toEqual(["tok_1", "ci", "viewer", "2025-11-30 17:40Z", "never"]);
    const joins = formatJoinTokens(
      [
        {
          id: "join_1",
          name: "rack-12",
          createdAt: NOW,
          expiresAt: NOW + 86400 * S,
          maxUses: 18,
          uses: 3,
          usable: true,
        },
        { id: "join_2", name: null, createdAt: NOW, expiresAt: null, maxUses: null, uses: 0, usable: true },
      ],
      NOW,
    );
    expect(row(joins, "join_1")).toEqual(["join_1", "rack-12", "3/18", "in 24h", "yes", "2025-11-30 17:40Z"]);
    expect(row(joins, "join_2")?.slice(1, 4)).toEqual(["-", "0", "never"]);
  });
});

describe("apply and secrets", () => {
  it.each([
    [{ kind: "Model", name: "m" }, "created", undefined, "model/m created\n"],
    [{ kind: "Deployment", name: "d" }, "unchanged", undefined, "deployment/d unchanged\n"],
    [
      { kind: "ApiKey", name: "k" },
      "created",
      "llmgw_key_x",
      "apikey/k created; its secret, shown once: llmgw_key_x\n",
    ],
  ] as const)("formatApplied %j %s", (doc, outcome, secret, want) =>
    expect(formatApplied(doc, outcome, secret)).toBe(want),
  );

  it("puts a new secret alone on stdout and the note on stderr", () => {
    expect(secretOutput("API key k created", "llmgw_key_x")).toEqual({
      stdout: "llmgw_key_x\n",
      stderr: "API key k created; keep the secret above, it is not shown again\n",
    });
  });
});
