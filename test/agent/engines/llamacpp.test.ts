import { describe, expect, it } from "vitest";
import { parseVulkanSummary } from "../../../agent/discovery/vulkan.js";
import { llamacpp } from "../../../agent/engines/llamacpp.js";
import type { Readiness } from "../../../agent/engines/types.js";
import { fixture } from "../../helpers/inventory.js";
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
  "--metrics",
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

describe("llamacpp.devices on the Vulkan build", () => {
  // The crafted listing: Vulkan GPU0 is llvmpipe, GPU1 is nvidia-smi card 1, GPU2 is card 0.
  const vulkanDevices = parseVulkanSummary(fixture("vulkan/CRAFTED-vulkaninfo-summary-nvidia-llvmpipe.txt"));
  const cardUuids = {
    0: "GPU-2f7e1c0a-5b3d-4e8f-9a61-0c4d2b7e8f13",
    1: "GPU-b7d40e19-3c2a-4f58-8e06-d1a95c3f7b20",
  };
  const vk = { ...HOST, backend: "vulkan" as const, vulkanDevices, cardUuids };
  const onCards = (deviceIds: number[]) =>
    makeShard({ ...gguf, visibleDevices: deviceIds.join(","), deviceIds, profile: { ...lc, gpusPerNode: 2 } });

  it("maps the placed cards to their Vulkan indices by UUID, in the placed cards' order", () => {
    // cards 0,1 are Vulkan 2,1: kept in placement order (not sorted), since llama.cpp numbers its devices in the
    // order of GGML_VK_VISIBLE_DEVICES and the first is its main device, as the first card of CUDA_VISIBLE_DEVICES is
    expect(llamacpp.devices(onCards([0, 1]), vk)).toEqual({ GGML_VK_VISIBLE_DEVICES: "2,1" });
    expect(llamacpp.devices(onCards([1]), vk)).toEqual({ GGML_VK_VISIBLE_DEVICES: "1" });
  });

  it("compares UUIDs without case and without the GPU- prefix", () => {
    const upper = { 0: "2F7E1C0A-5B3D-4E8F-9A61-0C4D2B7E8F13" };
    expect(llamacpp.devices(onCards([0]), { ...vk, cardUuids: upper })).toEqual({ GGML_VK_VISIBLE_DEVICES: "2" });
  });

  it("refuses a card that Vulkan does not list, saying what it lists and how to fix it", () => {
    const shard = onCards([0, 3]);
    const uuids = { ...cardUuids, 3: "GPU-0c4d2b7e-0000-4e8f-9a61-5b3d2f7e1c0a" };
    expect(() => llamacpp.devices(shard, { ...vk, cardUuids: uuids })).toThrow(
      /card 3 \(GPU-0c4d2b7e-0000-4e8f-9a61-5b3d2f7e1c0a\) is not among the Vulkan devices \(vulkaninfo --summary lists 0: llvmpipe \(LLVM 15\.0\.7, 256 bits\).*2: NVIDIA H100 80GB HBM3.*\): install the NVIDIA Vulkan driver .* or run llama\.cpp's CUDA build/,
    );
  });

  it("refuses a card whose UUID is not known", () => {
    expect(() => llamacpp.devices(onCards([0, 1]), { ...vk, cardUuids: { 0: cardUuids[0] } })).toThrow(
      /the UUID of card 1 is not known/,
    );
  });

  it("refuses when Vulkan lists no UUIDs (an older vulkaninfo)", () => {
    const noUuids = vulkanDevices.map(({ name }) => ({ name }));
    expect(() => llamacpp.devices(onCards([0]), { ...vk, vulkanDevices: noUuids })).toThrow(
      /card 0 .* is not among the Vulkan devices .*0: llvmpipe .*\(no UUID\)/,
    );
  });

  it("passes the card indices as they are when the Vulkan devices were not discovered", () => {
    expect(llamacpp.devices(onCards([0, 1]), { ...HOST, backend: "vulkan", cardUuids })).toEqual({
      GGML_VK_VISIBLE_DEVICES: "0,1",
    });
  });

  it("leaves the CUDA build to CUDA_VISIBLE_DEVICES, listing or not", () => {
    expect(llamacpp.devices(onCards([0, 1]), { ...vk, backend: "cuda" })).toBeUndefined();
  });
});
