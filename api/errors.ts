import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ErrorCode, Problem } from "../shared/schemas/problem.js";
import type { z } from "../shared/z.js";
import { dbFailure } from "./db/db-errors.js";

const TITLES: Record<ErrorCode, string> = {
  bad_request: "Bad request",
  validation_failed: "Validation failed",
  malformed_json: "Malformed JSON",
  unsupported_media_type: "Unsupported media type",
  unauthorized: "Unauthorized",
  forbidden: "Forbidden",
  not_found: "Not found",
  method_not_allowed: "Method not allowed",
  conflict: "Conflict",
  node_exists: "Node already registered",
  state_behind: "Control plane state older than the agent's",
  join_token_invalid: "Join token not usable",
  precondition_failed: "Precondition failed",
  payload_too_large: "Payload too large",
  unavailable: "Service unavailable",
  internal: "Internal server error",
};

/** An error a handler throws on purpose; onError turns it into problem+json. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    detail: string,
    readonly fields?: { path: string; message: string }[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }
}

/** Builds the application/problem+json response for an error. */
export function problem(
  c: Context,
  status: ContentfulStatusCode,
  code: ErrorCode,
  detail: string,
  fields?: Problem["errors"],
  headers?: Record<string, string>,
) {
  const body: Problem = {
    type: `urn:llmgw:problem:${code}`,
    title: TITLES[code],
    status,
    detail,
    code,
    requestId: c.get("requestId") ?? "unknown",
    ...(fields?.length ? { errors: fields } : {}),
  };
  return c.body(JSON.stringify(body), status, { "content-type": "application/problem+json", ...headers });
}

/** The zod issues of a failed validation as problem fields, each naming the field it is about. */
export function zodFields(error: z.ZodError, prefix = ""): { path: string; message: string }[] {
  return error.issues.flatMap((i) => {
    const base = [prefix, ...i.path.map(String)].filter(Boolean).join(".");
    if (i.code === "unrecognized_keys") {
      return i.keys.map((k) => ({ path: base ? `${base}.${k}` : k, message: "unknown field" }));
    }
    return [{ path: base || "(body)", message: i.message }];
  });
}

/** Seconds a client is told to wait after a 503 the database caused. */
const DB_RETRY_AFTER_S = 5;

/**
 * Turns any thrown error into problem+json: the database's failures (unreachable, refusing the token, full, locked)
 * are 503 `unavailable` with their cause, logged in one line; other unexpected ones are logged and hidden (500).
 */
export function onError(
  err: Error,
  c: Context,
  log: { warn(msg: string, extra?: object): void; error(msg: string, extra?: object): void },
) {
  if (err instanceof ApiError) return problem(c, err.status, err.code, err.message, err.fields, err.headers);
  if (err instanceof HTTPException) {
    if (err.status === 413) return problem(c, 413, "payload_too_large", err.message || "request body too large");
    if (err.status === 400 && /JSON/i.test(err.message))
      return problem(c, 400, "malformed_json", "the request body is not valid JSON");
    if (err.status === 415) return problem(c, 415, "unsupported_media_type", "send the body as application/json");
    if (err.status === 400) return problem(c, 400, "bad_request", err.message || "bad request");
    return problem(c, err.status as ContentfulStatusCode, "bad_request", err.message);
  }
  const db = dbFailure(err);
  if (db) {
    log.warn("database unavailable", { requestId: c.get("requestId"), kind: db.kind, cause: db.cause });
    return problem(c, db.status, db.code, `database unavailable: ${db.cause}`, undefined, {
      "retry-after": String(DB_RETRY_AFTER_S),
    });
  }
  log.error("unhandled error", { requestId: c.get("requestId"), error: err.stack ?? String(err) });
  return problem(c, 500, "internal", "an internal error occurred; the request id is in the server log");
}
