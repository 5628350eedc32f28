import { z } from "../z.js";
import { EpochMs, Text } from "./common.js";

export const CreateAdminToken = z
  .strictObject({ name: Text(128).min(1).openapi({ example: "ci-pipeline" }) })
  .openapi("CreateAdminToken");

export const AdminToken = z
  .object({
    id: z.string().openapi({ example: "tok_3kq8Zp2v" }),
    name: z.string(),
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
