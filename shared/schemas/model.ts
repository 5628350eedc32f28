import { isMigClass } from "../classes.js";
import { ENGINE_NAMES, multiNodeRefusal, ownedFlagRefusal } from "../engines.js";
import { z } from "../z.js";
import { Entries, EpochMs } from "./common.js";

export const Engine = z.enum(ENGINE_NAMES).openapi("Engine");
export type Engine = z.infer<typeof Engine>;

const Count = z.number().int().min(1).max(1024);
export const ResourceName = z
  .string()
  .regex(
    /^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$/,
    "1-63 lower-case letters, digits, '.', '_' or '-', starting and ending with a letter or digit",
  );

export const Profile = z
  .strictObject({
    name: ResourceName.openapi({ example: "tp4-h100" }),
    engine: Engine,
    gpuClass: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]*$/)
      .max(128)
      .openapi({ example: "h100-80g" }),
    tp: Count.optional().openapi({ description: "tensor parallel size (1 when absent)", example: 4 }),
    pp: Count.optional().openapi({ description: "pipeline parallel size (1 when absent)" }),
    gpusPerNode: Count.optional().openapi({
      description: "devices on each node (1 when absent); gpusPerNode × nodes must equal tp × pp",
      example: 4,
    }),
    nodes: Count.optional().openapi({ description: "nodes one replica spans (1 when absent)" }),
    args: z
      .array(z.string().max(4096))
      .max(256)
      .optional()
      .openapi({ example: ["--max-model-len", "32768"] }),
    env: Entries(
      z
        .string()
        .max(256)
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
      z.string().max(4096),
      256,
    ).optional(),
    startupTimeoutS: z
      .number()
      .int()
      .min(1)
      .max(86400)
      .optional()
      .openapi({ description: "how long loading may take before the shard is failed" }),
  })
  .openapi("Profile");
export type Profile = z.infer<typeof Profile>;

/** tp, pp, gpusPerNode and nodes with their defaults. */
export function profileShape(p: Pick<Profile, "tp" | "pp" | "gpusPerNode" | "nodes">) {
  return { tp: p.tp ?? 1, pp: p.pp ?? 1, gpusPerNode: p.gpusPerNode ?? 1, nodes: p.nodes ?? 1 };
}

/** True for a MIG instance class (`<card class>-mig-<profile>`). */

export const RoutingPolicy = z.enum(["prefix", "p2c"]).openapi("RoutingPolicy");
export type RoutingPolicy = z.infer<typeof RoutingPolicy>;

export const PrefixRouting = z
  .strictObject({
    blockChars: z.number().int().min(8).max(4096).optional().openapi({
      description: "characters in a block of the prompt (64 when absent: ~16 tokens, the engines' KV block)",
    }),
    keyBlocks: z.number().int().min(1).max(1024).optional().openapi({
      description:
        "blocks of each keyed part that make a request's key: of the system part and of the first user message, or of the leading prompt when it has no system part (32 when absent: 2,048 characters, ~512 tokens)",
    }),
    keyOn: z
      .enum(["conversation", "prompt"])
      .optional()
      .openapi({
        description:
          "what the key is made of: `conversation` (when absent) keys a chat or response with a system part on that " +
          "part and its first user message, so conversations under one system prompt spread over the replicas; " +
          "`prompt` keys every request on its prompt's leading blocks, so requests that share a long opening — a " +
          "document sent as a system message before short, different questions — stay together",
      }),
    loadFactor: z
      .number()
      .min(1)
      .max(100)
      .optional()
      .openapi({
        description:
          "a replica is skipped while its outstanding requests would exceed this × the mean (1.25 when absent), " +
          "for the next one in the key's order — unless it is within `slack` of the least loaded replica",
      }),
    slack: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .optional()
      .openapi({
        description:
          "a replica with at most this many outstanding requests more than the least loaded one is never skipped, " +
          "whatever the mean (0 when absent; see also `queueFactor`)",
      }),
    queueFactor: z
      .number()
      .min(0)
      .max(1000)
      .optional()
      .openapi({
        description:
          "a request stays on its key's replica while the prompts sent there and not yet begun (their own text, in " +
          "characters) exceed the shortest such queue by at most this × its own text — a long conversation or pasted " +
          "document waits for the replica that holds it, a short request spills (4 when absent; 0: off)",
      }),
  })
  .openapi("PrefixRouting", { description: "the knobs of `routing: prefix`" });

export const ModelSpec = z
  .strictObject({
    servedName: z.string().min(1).max(256).optional().openapi({
      description: "the `model` clients send (the resource name when absent)",
      example: "meta-llama/Llama-3.1-70B-Instruct",
    }),
    weightsPath: z.string().min(1).max(1024).openapi({ example: "/models/llama-3.1-70b-instruct" }),
    profiles: z.array(Profile).min(1).max(32),
    routing: RoutingPolicy.optional().openapi({
      description:
        "how the router picks a ready replica: `prefix` (the default) sends requests that share their prompt's opening " +
        "(a conversation's system part and first user message, or the leading blocks) to the same replica, whose prefix cache holds them, with bounded load; `p2c` the less loaded of two " +
        "random replicas (docs/router.md)",
    }),
    prefixRouting: PrefixRouting.optional(),
  })
  .superRefine((spec, ctx) => {
    const seen = new Set<string>();
    spec.profiles.forEach((p, i) => {
      if (seen.has(p.name))
        ctx.addIssue({
          code: "custom",
          path: ["profiles", i, "name"],
          message: `profile name ${p.name} is used twice`,
        });
      seen.add(p.name);
      const s = profileShape(p);
      if (s.gpusPerNode * s.nodes !== s.tp * s.pp) {
        ctx.addIssue({
          code: "custom",
          path: ["profiles", i, "gpusPerNode"],
          message: `gpusPerNode × nodes (${s.gpusPerNode} × ${s.nodes}) must equal tp × pp (${s.tp} × ${s.pp})`,
        });
      }
      (p.args ?? []).forEach((a, j) => {
        const owned = ownedFlagRefusal(p.engine, a);
        if (owned) ctx.addIssue({ code: "custom", path: ["profiles", i, "args", j], message: owned });
      });
      const spans = multiNodeRefusal(p.engine, s.nodes);
      if (spans) ctx.addIssue({ code: "custom", path: ["profiles", i, "nodes"], message: spans });
      if (isMigClass(p.gpuClass) && (s.tp !== 1 || s.pp !== 1 || s.gpusPerNode !== 1 || s.nodes !== 1)) {
        ctx.addIssue({
          code: "custom",
          path: ["profiles", i, "gpuClass"],
          message:
            "a MIG class needs tp = pp = gpusPerNode = nodes = 1: a process opens one MIG device, and MIG instances have no NVLink between them",
        });
      }
    });
  })
  .openapi("ModelSpec");
export type ModelSpec = z.infer<typeof ModelSpec>;

export const Metadata = z
  .object({
    version: z.number().int().openapi({ description: "bumped by every PUT that changes the spec" }),
    etag: z.string().openapi({ example: '"3"' }),
    createdAt: EpochMs,
    updatedAt: EpochMs,
  })
  .openapi("Metadata");

export const ModelStatus = z
  .object({ deployments: z.array(z.string()).openapi({ description: "deployments that name this model" }) })
  .openapi("ModelStatus");

export const Model = z
  .object({ name: ResourceName, spec: ModelSpec, status: ModelStatus, metadata: Metadata })
  .openapi("Model");
