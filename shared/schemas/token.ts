import { z } from "../z.js";
import { EpochMs, Text } from "./common.js";

/** What an admin token may do: admin everything, operator the fleet but no credentials, viewer only read. */
export const Role = z.enum(["admin", "operator", "viewer"]).openapi("Role", {
  description: "admin: everything; operator: deployments, models, node actions; viewer: read only",
});
export type Role = z.infer<typeof Role>;

export const CreateAdminToken = z
  .strictObject({
    name: Text(128).min(1).openapi({ example: "ci-pipeline" }),
    role: Role.default("admin").openapi({
      description: "what the token may do; admin when left out",
      default: "admin",
    }),
  })
  .openapi("CreateAdminToken");

export const AdminToken = z
  .object({
    id: z.string().openapi({ example: "tok_3kq8Zp2v" }),
    name: z.string(),
    role: Role,
    createdAt: EpochMs,
    lastUsedAt: EpochMs.nullable(),
  })
  .openapi("AdminToken");

export const CreatedAdminToken = AdminToken.extend({
  token: z.string().openapi({ example: "llmgw_adm_…", description: "shown once; only its hash is stored" }),
}).openapi("CreatedAdminToken");

export const CreateJoinToken = z
  .strictObject({
    name: Text(128).min(1).optional().openapi({ example: "rack-12" }),
    expiresInS: z
      .number()
      .int()
      .positive()
      .max(366 * 86400)
      .optional()
      .openapi({ example: 86400 }),
    maxUses: z.number().int().positive().max(100000).optional().openapi({ example: 18 }),
  })
  .openapi("CreateJoinToken");

export const JoinToken = z
  .object({
    id: z.string().openapi({ example: "join_9fQ2mX1c" }),
    name: z.string().nullable(),
    createdAt: EpochMs,
    expiresAt: EpochMs.nullable(),
    maxUses: z.number().int().nullable(),
    uses: z.number().int(),
    usable: z.boolean().openapi({ description: "not expired, not revoked, uses left" }),
  })
  .openapi("JoinToken");

export const CreatedJoinToken = JoinToken.extend({
  token: z.string().openapi({ example: "llmgw_join_…", description: "shown once; only its hash is stored" }),
}).openapi("CreatedJoinToken");
