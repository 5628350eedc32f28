// Answers of the API that have no schema in shared/schemas yet.
import { z } from "../../shared/z.js";

/** GET /api/v1/plan: the same shape as `Capacity` in api/routes/plan.ts (which should move to shared/schemas/plan.ts). */
export const Capacity = z.object({
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
      fits: z.number().int(),
      nodes: z.record(z.string(), z.number().int()),
      reason: z.string().optional(),
    }),
  ),
});
export type Capacity = z.infer<typeof Capacity>;
