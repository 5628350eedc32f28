// The environment one shard's engine gets on top of the agent's own: devices, NCCL's transport report, placement's
// NCCL variables, the management interface, the adapter's own variables, and the profile's env last so an operator
// can override anything.
import type { StartShard } from "../../shared/schemas/assignment.js";
import { ncclReportEnv } from "../nccl/env.js";
import type { EngineAdapter, EngineOptions } from "./types.js";

/**
 * The device-selection variables: the adapter's own (llama.cpp's Vulkan build), else CUDA's — in PCI bus order, the
 * order of nvidia-smi's indices that placement hands out (CUDA's default, fastest first, differs on mixed-GPU nodes).
 */
function deviceEnv(shard: StartShard, adapter: EngineAdapter, o: EngineOptions): Record<string, string> {
  return adapter.devices?.(shard, o) ?? { CUDA_DEVICE_ORDER: "PCI_BUS_ID", CUDA_VISIBLE_DEVICES: shard.visibleDevices };
}

/** Every variable the engine of `shard` needs beyond the agent's own environment. Throws when it cannot run here. */
export function shardEnv(shard: StartShard, adapter: EngineAdapter, o: EngineOptions): Record<string, string> {
  // NCCL_SOCKET_IFNAME is a list of prefixes unless it starts with `=` (`eno1` alone also selects eno10 …); Gloo takes
  // the one name as it is
  const mgmt: Record<string, string> = shard.mgmtInterface
    ? { NCCL_SOCKET_IFNAME: `=${shard.mgmtInterface}`, GLOO_SOCKET_IFNAME: shard.mgmtInterface }
    : {};
  return {
    ...deviceEnv(shard, adapter, o),
    ...ncclReportEnv(shard),
    ...shard.env,
    ...mgmt,
    ...(adapter.env?.(shard, o) ?? {}),
    ...shard.profile.env,
  };
}
