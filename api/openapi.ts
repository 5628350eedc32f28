import type { Hook } from "@hono/zod-openapi";
import { Problem } from "../shared/schemas/problem.js";
import { z } from "../shared/z.js";
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

const SYNC_FIRST = Symbol.for("llmgw.syncFirst");

/**
 * Makes `schema.safeParseAsync` — what the route's validator calls — parse synchronously first: zod compiles an
 * object schema's checks into one function only for synchronous parses (a heartbeat's body validates in ~26 µs that
 * way, ~57 µs through the asynchronous parse). The result is the same; a schema that turns out to hold an asynchronous
 * check is parsed asynchronously after all. Idempotent; the schema stays the instance the API document names.
 */
export function syncFirst<T extends z.ZodType>(schema: T): T {
  if (Object.hasOwn(schema, SYNC_FIRST)) return schema;
  Object.defineProperty(schema, SYNC_FIRST, { value: true });
  const parseAsync = schema.safeParseAsync;
  schema.safeParseAsync = async (data, params) => {
    try {
      return schema.safeParse(data, params);
    } catch (e) {
      if (e instanceof z.core.$ZodAsyncError) return parseAsync(data, params);
      throw e;
    }
  };
  return schema;
}

/** A required JSON request body. */
export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, description, content: { "application/json": { schema: syncFirst(schema) } } };
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
