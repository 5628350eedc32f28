// Request shapes the declarative routes share.
import type { Context } from "hono";
import { z } from "../../shared/z.js";
import { ApiError } from "../errors.js";

/** The optional `If-Match` header of a conditional PUT or DELETE. */
export const IfMatch = z.object({
  "if-match": z.string().max(256).optional().openapi({ param: { name: "if-match", in: "header" }, example: '"3"', description: "the ETag the change is based on, or `*`" }),
});

/** A PUT's conditional headers: `If-Match`, and `If-None-Match: *` to create only (412 when it exists). */
export const PutConditions = IfMatch.extend({
  "if-none-match": z.string().max(256).optional().openapi({ param: { name: "if-none-match", in: "header" }, example: "*", description: "`*`: create only, 412 when the resource exists" }),
});

/** A PUT body: `{spec}`, plus `name`, `status` and `metadata` as a GET returned them (status and metadata are ignored). */
export function putBody<T extends z.ZodType>(spec: T, id: string) {
  return z
    .strictObject({
      name: z.string().optional().openapi({ description: "must equal the name in the path when given" }),
      spec,
      status: z.unknown().optional().openapi({ description: "ignored: server state" }),
      metadata: z.unknown().optional().openapi({ description: "ignored: server state" }),
    })
    .openapi(id);
}

/** 400 when a body names another resource than its path. */
export function sameName(path: string, body: string | undefined): void {
  if (body !== undefined && body !== path) {
    throw new ApiError(400, "validation_failed", `name: the body names ${body} but the path names ${path}`, [{ path: "name", message: `must equal ${path}` }]);
  }
}

/** The spec as the client wrote it (key order included), so that GET echoes it exactly; call after validation. */
export async function writtenSpec(c: Context): Promise<unknown> {
  return ((await c.req.json()) as { spec: unknown }).spec;
}
