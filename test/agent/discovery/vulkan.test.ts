import { describe, expect, it } from "vitest";
import type { Runner, RunResult } from "../../../agent/discovery/exec.js";
import { parseVulkanSummary, readVulkanDevices } from "../../../agent/discovery/vulkan.js";
import { DiscoveryError } from "../../../shared/schemas/inventory.js";
import { fixture } from "../../helpers/inventory.js";

// llvmpipe first, then the two NVIDIA cards in the opposite order to nvidia-smi's (GPU1 is card 1, GPU2 is card 0)
const CRAFTED = "vulkan/CRAFTED-vulkaninfo-summary-nvidia-llvmpipe.txt";
const CRAFTED_DEVICES = [
  { name: "llvmpipe (LLVM 15.0.7, 256 bits)", uuid: "6d657361-3233-2e32-2e31-2d3175627500", vendorId: "0x10005" },
  { name: "NVIDIA H100 80GB HBM3", uuid: "b7d40e19-3c2a-4f58-8e06-d1a95c3f7b20", vendorId: "0x10de" },
  { name: "NVIDIA H100 80GB HBM3", uuid: "2f7e1c0a-5b3d-4e8f-9a61-0c4d2b7e8f13", vendorId: "0x10de" },
];

describe("parseVulkanSummary", () => {
  it("lists the devices of a two-vendor node in the loader's order, past the extension and layer sections", () => {
    expect(parseVulkanSummary(fixture(CRAFTED))).toEqual(CRAFTED_DEVICES);
  });

  it("reads CRLF output, tab indents, and an older vulkaninfo without deviceUUID", () => {
    const text = [
      "Devices:",
      "========",
      "GPU0:",
      "\tvendorID           = 0x10de",
      "\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU",
      "\tdeviceName         = NVIDIA A10",
      "",
    ].join("\r\n");
    expect(parseVulkanSummary(text)).toEqual([{ name: "NVIDIA A10", vendorId: "0x10de" }]);
  });

  it("is an empty list for a Devices section without entries", () => {
    expect(parseVulkanSummary("Devices:\n========\n")).toEqual([]);
  });

  it.each([
    ["empty output", ""],
    [
      "the full report's layer device lists",
      "Layers: count = 1\n=================\n\tDevices: count = 1\n\t\tGPU id = 0\n",
    ],
    ["no underline", "Devices:\nGPU0:\n        deviceName = x\n"],
  ])("throws on %s, naming vulkaninfo --summary", (_, text) => {
    expect(() => parseVulkanSummary(text)).toThrow(/^vulkaninfo --summary: no "Devices:" section/);
  });

  it("throws on a gap in the GPU numbers (every later index would be off)", () => {
    expect(() => parseVulkanSummary("Devices:\n========\nGPU0:\n    deviceName = a\nGPU2:\n")).toThrow(
      /GPU2 where GPU1 was expected/,
    );
  });
});

describe("readVulkanDevices", () => {
  const answer =
    (r: RunResult): Runner =>
    async (cmd, args) => {
      expect([cmd, ...args]).toEqual(["vulkaninfo", "--summary"]);
      return r;
    };

  it("runs vulkaninfo --summary and parses it", async () => {
    const r = await readVulkanDevices(answer({ ok: true, stdout: fixture(CRAFTED), stderr: "" }), 1000);
    expect(r).toEqual({ devices: CRAFTED_DEVICES });
  });

  it("is no error and no devices when vulkaninfo is not installed", async () => {
    const r = await readVulkanDevices(
      answer({ ok: false, missing: true, error: "vulkaninfo --summary: not found" }),
      1000,
    );
    expect(r).toEqual({});
  });

  it.each<[string, RunResult, RegExp]>([
    ["a failed run", { ok: false, missing: false, error: "vulkaninfo --summary: exited with status 1" }, /status 1/],
    ["unreadable output", { ok: true, stdout: "ERROR_INCOMPATIBLE_DRIVER\n", stderr: "" }, /no "Devices:" section/],
  ])("reports %s as a discovery error", async (_, result, message) => {
    const r = await readVulkanDevices(answer(result), 1000);
    expect(r.devices).toBeUndefined();
    expect(DiscoveryError.parse(r.error)).toEqual({
      source: "vulkaninfo --summary",
      message: expect.stringMatching(message),
    });
  });
});
