import { describe, expect, it } from "vitest";
import { shardEnv } from "../../../agent/engines/env.js";
import { llamacpp } from "../../../agent/engines/llamacpp.js";
import type { EngineAdapter } from "../../../agent/engines/types.js";
import { vllm } from "../../../agent/engines/vllm.js";
import { HOST, makeShard, twoNodeShard } from "./shard.js";

const MIG = "MIG-4f5e6d7c-0000-1111-2222-333344445555";
const placement = { NCCL_MNNVL_ENABLE: "0", NCCL_CUMEM_ENABLE: "1", NCCL_IB_HCA: "=mlx5_0,mlx5_1" };
/** What an engine of several GPUs is asked to print, so the agent reads which transport NCCL chose. */
const REPORT = { NCCL_DEBUG: "INFO", NCCL_DEBUG_SUBSYS: "INIT,NET" };

describe("shardEnv", () => {
  it.each([
    ["single node", makeShard(), { CUDA_DEVICE_ORDER: "PCI_BUS_ID", CUDA_VISIBLE_DEVICES: "0,1,2,3", ...REPORT }],
    [
      "MIG instance",
      makeShard({ visibleDevices: MIG, deviceIds: [1001] }),
      { CUDA_DEVICE_ORDER: "PCI_BUS_ID", CUDA_VISIBLE_DEVICES: MIG },
    ],
    [
      "multi-node with placement env and mgmt interface",
      twoNodeShard(1, { env: placement, mgmtInterface: "eno1" }),
      {
        CUDA_DEVICE_ORDER: "PCI_BUS_ID",
        CUDA_VISIBLE_DEVICES: "0,1,2,3",
        ...REPORT,
        ...placement,
        NCCL_SOCKET_IFNAME: "=eno1",
        GLOO_SOCKET_IFNAME: "eno1",
      },
    ],
    [
      "profile env overriding placement, mgmt and devices",
      twoNodeShard(0, {
        env: placement,
        mgmtInterface: "eno1",
        profile: {
          env: {
            NCCL_IB_HCA: "=mlx5_2",
            NCCL_SOCKET_IFNAME: "bond0",
            CUDA_VISIBLE_DEVICES: "3,2,1,0",
            VLLM_LOGGING_LEVEL: "DEBUG",
          },
        },
      }),
      {
        CUDA_DEVICE_ORDER: "PCI_BUS_ID",
        CUDA_VISIBLE_DEVICES: "3,2,1,0",
        ...REPORT,
        NCCL_MNNVL_ENABLE: "0",
        NCCL_CUMEM_ENABLE: "1",
        NCCL_IB_HCA: "=mlx5_2",
        NCCL_SOCKET_IFNAME: "bond0",
        GLOO_SOCKET_IFNAME: "eno1",
        VLLM_LOGGING_LEVEL: "DEBUG",
      },
    ],
  ])("%s", (_, shard, want) => expect(shardEnv(shard, vllm, HOST)).toEqual(want));

  it("gives llama.cpp's CUDA build CUDA_VISIBLE_DEVICES, on MIG too", () => {
    const shard = makeShard({ visibleDevices: MIG, deviceIds: [1001], profile: { engine: "llamacpp" } });
    expect(shardEnv(shard, llamacpp, { ...HOST, backend: "cuda" })).toEqual({
      CUDA_DEVICE_ORDER: "PCI_BUS_ID",
      CUDA_VISIBLE_DEVICES: MIG,
    });
  });

  it("gives llama.cpp's Vulkan build the card indices and no CUDA variable", () => {
    const shard = makeShard({
      visibleDevices: "2,3",
      deviceIds: [2, 3],
      profile: { engine: "llamacpp", env: { GGML_VK_DISABLE_F16: "1" } },
    });
    expect(shardEnv(shard, llamacpp, { ...HOST, backend: "vulkan" })).toEqual({
      GGML_VK_VISIBLE_DEVICES: "2,3",
      ...REPORT,
      GGML_VK_DISABLE_F16: "1",
    });
  });

  it("refuses a MIG instance on Vulkan", () => {
    const shard = makeShard({ visibleDevices: MIG, deviceIds: [1001], profile: { engine: "llamacpp" } });
    expect(() => shardEnv(shard, llamacpp, { ...HOST, backend: "vulkan" })).toThrow(
      /Vulkan cannot address MIG instances/,
    );
  });

  it("layers the adapter's env over placement and under the profile's", () => {
    const adapter: EngineAdapter = {
      ...vllm,
      env: () => ({ NCCL_CUMEM_ENABLE: "0", ENGINE_ONLY: "a", PROFILE_WINS: "adapter" }),
    };
    const shard = makeShard({ env: placement, profile: { env: { PROFILE_WINS: "profile" } } });
    expect(shardEnv(shard, adapter, HOST)).toEqual({
      CUDA_DEVICE_ORDER: "PCI_BUS_ID",
      CUDA_VISIBLE_DEVICES: "0,1,2,3",
      ...REPORT,
      NCCL_MNNVL_ENABLE: "0",
      NCCL_CUMEM_ENABLE: "0",
      NCCL_IB_HCA: "=mlx5_0,mlx5_1",
      ENGINE_ONLY: "a",
      PROFILE_WINS: "profile",
    });
  });

  it("asks one GPU's engine for no NCCL report, and leaves a profile's own NCCL_DEBUG alone", () => {
    const one = makeShard({ deviceIds: [2], visibleDevices: "2" });
    expect(shardEnv(one, vllm, HOST)).toEqual({ CUDA_DEVICE_ORDER: "PCI_BUS_ID", CUDA_VISIBLE_DEVICES: "2" });
    const own = twoNodeShard(0, { profile: { env: { NCCL_DEBUG: "WARN" } } });
    const env = shardEnv(own, vllm, HOST);
    expect(env.NCCL_DEBUG).toBe("WARN");
    expect(env.NCCL_DEBUG_SUBSYS).toBeUndefined();
  });
});
