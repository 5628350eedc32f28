import { describe, expect, it } from "vitest";
import { replicaState, serves } from "../../api/placement/serving.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";

const t = (verdict: ShardTransport["verdict"]): ShardTransport => ({ verdict, expected: "ib:ib-a (mlx5_0)" });

describe("replicaState", () => {
  it.each([
    ["every shard ready, no transport said (one GPU each)", [{ state: "ready" }, { state: "ready" }], "ready"],
    [
      "every shard ready and ok",
      [
        { state: "ready", transport: t("ok") },
        { state: "ready", transport: t("ok") },
      ],
      "ready",
    ],
    ["one shard still loading", [{ state: "ready" }, { state: "loading" }], "starting"],
    [
      "ready but NCCL has not said yet",
      [
        { state: "ready", transport: t("ok") },
        { state: "ready", transport: t("pending") },
      ],
      "starting",
    ],
    ["ready, one unverified (an engine that did not say)", [{ state: "ready", transport: t("unverified") }], "ready"],
    [
      "ready, one degraded",
      [
        { state: "ready", transport: t("ok") },
        { state: "ready", transport: t("degraded") },
      ],
      "degraded",
    ],
    ["a failed shard wins", [{ state: "failed" }, { state: "ready", transport: t("degraded") }], "failed"],
    ["no shard", [], "starting"],
  ] as const)("%s", (_, shards, want) => expect(replicaState(shards)).toBe(want));

  it("serves a degraded replica only under transport: prefer", () => {
    expect([serves("ready", "require"), serves("degraded", "require"), serves("degraded", "prefer")]).toEqual([
      true,
      false,
      true,
    ]);
    expect(serves("starting", "prefer")).toBe(false);
  });
});
