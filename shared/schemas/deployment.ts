import { z } from "../z.js";
import { Entries, MAX_LABELS } from "./common.js";
import { Metadata, ResourceName } from "./model.js";

export const DeploymentSpec = z
  .strictObject({
    model: ResourceName.openapi({ example: "llama-3.1-70b" }),
    replicas: z.number().int().min(0).max(10000).openapi({ example: 2 }),
    pool: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .openapi({ description: "the node label `pool` to run in (`default` when absent)", example: "prod" }),
    profiles: z
      .array(ResourceName)
      .min(1)
      .max(32)
      .refine((a) => new Set(a).size === a.length, "profile names must be unique")
      .optional()
      .openapi({
        description:
          "allowed profiles of the model, most preferred first (all of them, in the model's order, when absent)",
      }),
    nodeSelector: Entries(z.string().max(63), z.string().max(256), MAX_LABELS)
      .optional()
      .openapi({
        description: `node labels a node must all have, at most ${MAX_LABELS} (as many as a node may have)`,
        example: { "gpu-vendor": "nvidia" },
      }),
    transport: z.enum(["require", "prefer"]).optional().openapi({
      description:
        "a multi-node replica whose NCCL does not use the transport it was placed on (a socket fallback, HCAs it was not given, no MNNVL in an NVLink domain) is `degraded`: with `require` (the default) it is not served and is re-placed on other nodes when a set fits there; with `prefer` it is served as it is",
      example: "require",
    }),
  })
  .openapi("DeploymentSpec");
export type DeploymentSpec = z.infer<typeof DeploymentSpec>;

export const DeploymentStatus = z
  .object({
    phase: z.enum(["Pending", "Starting", "Ready", "Failed"]).openapi({
      description:
        "Ready: every desired replica ready; Starting: all placed, not all ready; Pending: some not placed; Failed: its replicas failed past their restart limit twice or more in a row, none ready since (placed again with a growing back-off; `failure` says why)",
    }),
    desired: z.number().int(),
    placed: z.number().int(),
    ready: z.number().int(),
    pending: z
      .array(z.object({ count: z.number().int(), reason: z.string() }))
      .openapi({ description: "why replicas are not placed, in words a person can act on" }),
    failure: z.string().optional().openapi({
      description: "when Failed: how often, the last failure (exit code, run time, last log line) and the next try",
      example:
        "failed 3 times in a row past the restart limit (last: exit 1 after 3 s (gave up after 5 restarts): CUDA error: out of memory); next try at 14:05:09 UTC",
    }),
  })
  .openapi("DeploymentStatus");

export const Deployment = z
  .object({ name: ResourceName, spec: DeploymentSpec, status: DeploymentStatus, metadata: Metadata })
  .openapi("Deployment");
