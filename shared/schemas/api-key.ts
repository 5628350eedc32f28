import { z } from "../z.js";
import { EpochMs } from "./common.js";
import { Metadata, ResourceName } from "./model.js";

const PerMinute = z.number().int().positive().max(1_000_000_000);

export const ApiKeySpec = z
  .strictObject({
    models: z
      .array(z.string().min(1).max(256))
      .max(256)
      .optional()
      .openapi({
        description:
          "served model names (the `model` clients send) this key may use; every model when absent, none when empty",
        example: ["meta-llama/Llama-3.1-8B-Instruct"],
      }),
    requestsPerMinute: PerMinute.optional().openapi({
      description: "requests this key may start per minute, per API instance (unlimited when absent)",
      example: 600,
    }),
    tokensPerMinute: PerMinute.optional().openapi({
      description:
        "prompt + completion tokens this key may spend per minute, per API instance; requests are refused while the minute's tokens are spent (unlimited when absent)",
      example: 200000,
    }),
    maxConcurrent: z.number().int().positive().max(1_000_000).optional().openapi({
      description:
        "requests of this key served at once, per API instance, over every model (unlimited when absent); more wait in the key's own queue, served round-robin with other keys' queues, up to the router's queue timeout (LLMGW_ROUTER_QUEUE_TIMEOUT_S, 30 s), then get 429 `queue_timeout` with Retry-After",
      example: 16,
    }),
    expiresAt: EpochMs.optional().openapi({
      description: "Unix time in milliseconds from which the key is refused (never when absent)",
      example: 1798761600000,
    }),
  })
  .openapi("ApiKeySpec");
export type ApiKeySpec = z.infer<typeof ApiKeySpec>;

export const ApiKeyStatus = z
  .object({
    expired: z
      .boolean()
      .openapi({ description: "true once `expiresAt` has passed: the router refuses the key", example: false }),
    secretIssuedAt: EpochMs.openapi({
      description: "when the current secret was made (creation or the last rotation)",
    }),
  })
  .openapi("ApiKeyStatus");

export const ApiKey = z
  .object({
    name: ResourceName.openapi({ example: "team-search" }),
    spec: ApiKeySpec,
    status: ApiKeyStatus,
    metadata: Metadata,
  })
  .openapi("ApiKey");
export type ApiKey = z.infer<typeof ApiKey>;

export const ApiKeyWithSecret = ApiKey.extend({
  secret: z.string().openapi({
    description: "the key's secret, for `Authorization: Bearer` on /v1/*; shown only here, only its hash is stored",
    example: "llmgw_key_…",
  }),
}).openapi("ApiKeyWithSecret");
