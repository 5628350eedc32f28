import type { Hook } from "@hono/zod-openapi";
import { Problem } from "../shared/schemas/problem.js";
import type { z } from "../shared/z.js";
import type { AppEnv } from "./deps.js";
import { ApiError, zodFields } from "./errors.js";

const DESCRIPTIONS: Record<number, string> = {
  400: "Invalid input: malformed JSON, a wrong or unknown field (named in `errors`)",
  401: "Missing, unknown or revoked token",
  403: "The token is valid but may not do this",
  404: "No such resource",
  409: "Conflicts with the current state",
  412: "`If-Match` does not match the current ETag",
  413: "Request body larger than the server's limit",
  415: "The body is not application/json",
  503: "Not ready: the database is unreachable or its schema is behind this build",
};

/** problem+json responses for the given statuses, spread into a route's `responses`. */
export function errorResponses(...statuses: (keyof typeof DESCRIPTIONS)[]) {
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      { description: DESCRIPTIONS[s]!, content: { "application/problem+json": { schema: Problem } } },
    ]),
  ) as Record<number, { description: string; content: { "application/problem+json": { schema: typeof Problem } } }>;
}

/** A required JSON request body. */
export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, description, content: { "application/json": { schema } } };
}

/** A JSON response. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

type Security = Record<string, string[]>[];
export const adminSecurity: Security = [{ adminToken: [] }];
export const nodeSecurity: Security = [{ nodeToken: [] }];
/** Registration takes any of the three: join (new node), node (itself), admin (reset). */
export const registerSecurity: Security = [{ joinToken: [] }, { nodeToken: [] }, { adminToken: [] }];

/** Validation failures become 400 problem+json naming every bad field; nothing is written. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (result.success) return;
  const prefix = result.target === "json" ? "" : result.target;
  const fields = zodFields(result.error as z.ZodError, prefix);
  const detail = fields.map((f) => `${f.path}: ${f.message}`).join("; ");
  throw new ApiError(400, "validation_failed", detail, fields);
};
