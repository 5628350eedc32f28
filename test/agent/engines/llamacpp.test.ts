import { describe, expect, it } from "vitest";
import { llamacpp } from "../../../agent/engines/llamacpp.js";
import type { Readiness } from "../../../agent/engines/types.js";
import { HOST, makeShard, PROBE, twoNodeShard } from "./shard.js";

const lc = { engine: "llamacpp", tp: 1, gpusPerNode: 1 } as const;
const gguf = {
  weightsPath: "/models/qwen2.5-7b-q4_k_m.gguf",
  model: "qwen2.5-7b",
  visibleDevices: "2",
  deviceIds: [2],
};
const WANT = [
  "llama-server",
  "-m",
  "/models/qwen2.5-7b-q4_k_m.gguf",
  "--host",
  "0.0.0.0",
  "--port",
  "20001",
  "-ngl",
  "999",
  "--alias",
  "qwen2.5-7b",
];

describe("llamacpp.argv", () => {
  it.each([
    ["single GPU", makeShard({ ...gguf, profile: lc }), WANT],
    ["profile args last", makeShard({ ...gguf, profile: { ...lc, args: ["-c", "8192"] } }), [...WANT, "-c", "8192"]],
    [
      "MIG instance (CUDA build)",
      makeShard({
        ...gguf,
        visibleDevices: "MIG-4f5e6d7c-0000-1111-2222-333344445555",
        deviceIds: [1001],
        profile: lc,
      }),
      WANT,
    ],
  ])("%s", (_, shard, want) => expect(llamacpp.argv(shard, HOST)).toEqual(want));

  it("is the same command line on the Vulkan build (devices go by env)", () => {
    expect(llamacpp.argv(makeShard({ ...gguf, profile: lc }), { ...HOST, backend: "vulkan" })).toEqual(WANT);
  });

  it("starts agent.yaml's program instead of llama-server", () => {
    expect(
      llamacpp.argv(makeShard({ ...gguf, profile: lc }), {
        ...HOST,
        command: ["/opt/llama.cpp/build/bin/llama-server"],
      })[0],
    ).toBe("/opt/llama.cpp/build/bin/llama-server");
  });

  it.each([0, 1])("refuses multi-node rank %i", (rank) => {
    expect(() => llamacpp.argv(twoNodeShard(rank, { profile: { engine: "llamacpp" } }), HOST)).toThrow(
      /spans 2 nodes, but llama\.cpp runs on one node only/,
    );
  });
});

describe("llamacpp readiness", () => {
  it.each<[keyof typeof PROBE, Readiness]>([
    ["refused", "loading"],
    ["timeout", "loading"],
    ["ok", "ready"],
    ["loadingModel", "loading"],
    ["internal", "dead"],
    ["notFound", "dead"],
  ])("%s → %s", (probe, want) => expect(llamacpp.readiness(PROBE[probe])).toBe(want));

  it("probes /health and asks `llama-server --version`", () => {
    expect(llamacpp.healthPath(makeShard({ profile: lc }))).toBe("/health");
    expect(llamacpp.version).toEqual([["llama-server", "--version"]]);
  });
});
