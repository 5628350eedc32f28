import { z } from "../z.js";

/** GET /api/v1/plan: devices by class, and how many more replicas of each profile fit now and where. */
export const Capacity = z
  .object({
    classes: z.array(
      z.object({
        class: z.string(),
        total: z.number().int(),
        free: z.number().int(),
        used: z.number().int(),
        unavailable: z.array(z.object({ count: z.number().int(), reason: z.string() })),
      }),
    ),
    profiles: z.array(
      z.object({
        model: z.string(),
        profile: z.string(),
        gpuClass: z.string(),
        pool: z.string(),
        fits: z
          .number()
          .int()
          .openapi({ description: "how many more replicas of this profile fit now (a MIG class: one instance each)" }),
        nodes: z.record(z.string(), z.number().int()).openapi({ description: "where they would go: node → shards" }),
        reason: z.string().optional().openapi({ description: "why none fits" }),
      }),
    ),
  })
  .openapi("Capacity");
export type Capacity = z.infer<typeof Capacity>;
