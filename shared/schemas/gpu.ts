import { z } from "../z.js";
import { Text } from "./common.js";

export const GpuProcess = z
  .strictObject({
    pid: z.number().int().nonnegative(),
    name: Text(512).optional(),
    usedMemoryMiB: z.number().int().nonnegative().optional(),
  })
  .openapi("GpuProcess");
export type GpuProcess = z.infer<typeof GpuProcess>;

/** NVLink fabric of one GPU as the driver reports it; a missing field means "not reported". */
export const GpuFabric = z
  .strictObject({
    state: Text(64).openapi({
      example: "Completed",
      description: "`Completed`, `In Progress`, `Not Started`, `Not Supported`",
    }),
    status: Text(64).optional().openapi({ example: "Success" }),
    clusterUuid: Text(64).optional().openapi({ example: "3482beb4-a3cd-48a4-9b6c-a6ba43bc59a4" }),
    cliqueId: Text(32).optional().openapi({ example: "32766" }),
    health: z
      .strictObject({
        summary: Text(64)
          .optional()
          .openapi({ example: "Healthy", description: "`Healthy`, `Limited Capacity`, `Unhealthy` (driver 580+)" }),
        bandwidth: Text(64).optional().openapi({ example: "Full", description: "`Full` or `Degraded`" }),
        routeRecoveryInProgress: Text(16).optional(),
        routeUnhealthy: Text(16).optional(),
        accessTimeoutRecovery: Text(16).optional(),
        incorrectConfiguration: Text(64).optional(),
      })
      .optional(),
  })
  .openapi("GpuFabric");
export type GpuFabric = z.infer<typeof GpuFabric>;

export const PlatformInfo = z
  .strictObject({
    chassisSerial: Text(64).optional(),
    slotNumber: z.number().int().optional(),
    trayIndex: z.number().int().optional(),
    hostId: z.number().int().optional(),
    peerType: Text(64).optional(),
    moduleId: z.number().int().optional(),
  })
  .openapi("PlatformInfo");

export const GpuHealth = z
  .strictObject({
    temperatureC: z.number().optional(),
    temperatureSlowdownC: z.number().optional().openapi({
      description: "the card's own slowdown temperature (`-q -x` `gpu_temp_slow_threshold`), when it reports one",
    }),
    powerDrawW: z.number().optional(),
    powerLimitW: z.number().optional(),
    eccUncorrectableVolatile: z.number().int().nonnegative().optional(),
    eccUncorrectableAggregate: z.number().int().nonnegative().optional(),
    retiredPagesPending: z.boolean().optional(),
    remappedRowsPending: z.boolean().optional(),
    processes: z.array(GpuProcess).max(256),
    problems: z
      .array(Text(512))
      .max(64)
      .openapi({ description: "Plain-language reasons this GPU must not be placed on" }),
  })
  .openapi("GpuHealth");

export const MigInstance = z
  .strictObject({
    index: z
      .number()
      .int()
      .min(0)
      .max(63)
      .openapi({ description: "MIG device index on its card (`nvidia-smi -L` Device N)" }),
    uuid: Text(128).optional().openapi({ example: "MIG-1b9b35e0-7c8a-5e3e-9d4c-5d5a1d0f0f00" }),
    profile: Text(64).optional().openapi({
      example: "3g.40gb",
      description: "as `nvidia-smi -L` prints it; `1c.3g.71gb` for compute-instance profiles",
    }),
    class: Text(128).optional().openapi({ example: "a100-80g-mig-3g.40gb" }),
    gpuInstanceId: z.number().int().nonnegative().optional(),
    computeInstanceId: z.number().int().nonnegative().optional(),
    memoryTotalMiB: z.number().int().nonnegative().optional(),
    memoryUsedMiB: z.number().int().nonnegative().optional(),
    processes: z.array(GpuProcess).max(256),
    problems: z.array(Text(512)).max(64).optional().openapi({
      description:
        "Plain-language reasons this instance must not be placed on (another process on it); its card's problems apply too",
    }),
  })
  .openapi("MigInstance");
export type MigInstance = z.infer<typeof MigInstance>;

export const NvlinkPeer = z
  .strictObject({ gpu: z.number().int().nonnegative(), links: z.number().int().positive() })
  .openapi("NvlinkPeer", { description: "Another GPU of this node reached over NVLink (`NV#` in `topo -m`)" });

export const NicPath = z
  .strictObject({
    nic: Text(64).openapi({ example: "mlx5_0" }),
    path: z.enum(["X", "PIX", "PXB", "PHB", "NODE", "SYS", "NV"]).openapi({ example: "PIX" }),
  })
  .openapi("NicPath");

export const Gpu = z
  .strictObject({
    index: z.number().int().min(0).max(63),
    uuid: Text(128).openapi({ example: "GPU-4a2c9f7e-0d5b-4c1e-9a6f-2e8d7c3b1a90" }),
    name: Text(128).openapi({ example: "NVIDIA H100 80GB HBM3" }),
    class: Text(128).openapi({ example: "h100-80g" }),
    memoryTotalMiB: z.number().int().nonnegative(),
    memoryUsedMiB: z.number().int().nonnegative().optional(),
    computeCapability: Text(16).optional().openapi({ example: "9.0" }),
    numaNode: z.number().int().nullable().optional(),
    pciBusId: Text(64).optional().openapi({ example: "00000000:18:00.0" }),
    driverVersion: Text(64).optional(),
    cudaVersion: Text(32).optional(),
    utilizationPercent: z.number().min(0).max(100).optional().openapi({ description: "absent for a card in MIG mode" }),
    nvlinkPeers: z.array(NvlinkPeer).max(64),
    nics: z.array(NicPath).max(64).openapi({ description: "NICs ranked nearest first" }),
    nearestNic: Text(64).optional(),
    fabric: GpuFabric.optional(),
    platform: PlatformInfo.optional(),
    health: GpuHealth,
    mig: z
      .strictObject({
        current: Text(32).openapi({ example: "Enabled" }),
        pending: Text(32).optional(),
        instances: z.array(MigInstance).max(8).openapi({ description: "at most 7 on any card MIG runs on" }),
      })
      .optional(),
  })
  .openapi("Gpu");
export type Gpu = z.infer<typeof Gpu>;
