import { z } from "../z.js";

/** `skip`: the check does not apply here (no server configured, no NVLink domain, no GPU read) — never a failure. */
export const DoctorStatus = z.enum(["ok", "warn", "fail", "skip"]).openapi("DoctorStatus");
export type DoctorStatus = z.infer<typeof DoctorStatus>;

/** One finding of `llmgw doctor`. */
export const DoctorCheck = z
  .strictObject({
    id: z
      .string()
      .regex(/^[a-z][a-z0-9-]*$/)
      .openapi({ example: "imex", description: "stable check id (docs/operations.md lists them)" }),
    status: DoctorStatus,
    finding: z.string().min(1).openapi({ example: "IMEX is down (node in NVLink domain 3482beb4-….2)" }),
    fix: z.string().min(1).optional().openapi({ example: "systemctl enable --now nvidia-imex" }),
  })
  .openapi("DoctorCheck");
export type DoctorCheck = z.infer<typeof DoctorCheck>;

/** What `llmgw doctor --json` prints: every check in a fixed order, and how many ended in each status. */
export const DoctorReport = z
  .strictObject({
    checks: z.array(DoctorCheck),
    summary: z.strictObject({
      ok: z.number().int().nonnegative(),
      warn: z.number().int().nonnegative(),
      fail: z.number().int().nonnegative(),
      skip: z.number().int().nonnegative(),
    }),
  })
  .openapi("DoctorReport");
export type DoctorReport = z.infer<typeof DoctorReport>;
