import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ErrorCode, Problem } from "../shared/schemas/problem.js";
import type { z } from "../shared/z.js";
import { chain, dbFailure } from "./db/db-errors.js";

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

/** What a problem+json answer says: its status, code, detail, fields and extra headers. */
export type ProblemOf = {
  status: ContentfulStatusCode;
  code: ErrorCode;
  detail: string;
  fields?: Problem["errors"];
  headers?: Record<string, string>;
};

/** The application/problem+json document of a problem, for the request `requestId`. */
export function problemBody(p: ProblemOf, requestId: string | undefined): Problem {
  return {
    type: `urn:llmgw:problem:${p.code}`,
    title: TITLES[p.code],
    status: p.status,
    detail: p.detail,
    code: p.code,
    requestId: requestId ?? "unknown",
    ...(p.fields?.length ? { errors: p.fields } : {}),
  };
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
  const body = problemBody({ status, code, detail, fields }, c.get("requestId"));
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

type ErrorLog = { warn(msg: string, extra?: object): void; error(msg: string, extra?: object): void };

/**
 * What any thrown error answers: the database's failures (unreachable, refusing the token, full, locked) are 503
 * `unavailable` with their cause, logged in one line; other unexpected ones are logged and hidden (500).
 */
export function problemOf(err: Error, requestId: string | undefined, log: ErrorLog): ProblemOf {
  if (err instanceof ApiError)
    return { status: err.status, code: err.code, detail: err.message, fields: err.fields, headers: err.headers };
  if (err instanceof HTTPException) {
    if (err.status === 413)
      return { status: 413, code: "payload_too_large", detail: err.message || "request body too large" };
    if (err.status === 400 && /JSON/i.test(err.message))
      return { status: 400, code: "malformed_json", detail: "the request body is not valid JSON" };
    if (err.status === 415)
      return { status: 415, code: "unsupported_media_type", detail: "send the body as application/json" };
    if (err.status === 400) return { status: 400, code: "bad_request", detail: err.message || "bad request" };
    return { status: err.status as ContentfulStatusCode, code: "bad_request", detail: err.message };
  }
  const db = dbFailure(err);
  if (db) {
    log.warn("database unavailable", { requestId, kind: db.kind, cause: db.cause });
    return {
      status: db.status,
      code: db.code,
      detail: `database unavailable: ${db.cause}`,
      headers: { "retry-after": String(DB_RETRY_AFTER_S) },
    };
  }
  // a library's error often says only what failed ("Failed query: …"); why is in its causes
  const causes = causesOf(err);
  log.error("unhandled error", { requestId, error: err.stack ?? String(err), ...(causes.length ? { causes } : {}) });
  return { status: 500, code: "internal", detail: "an internal error occurred; the request id is in the server log" };
}

/** The messages of `err`'s causes, outermost first (db-errors' chain), each with its code where it has one. */
export function causesOf(err: unknown): string[] {
  const under = chain(err).slice(1);
  const out = under.map((e) => {
    const message = typeof e.message === "string" ? e.message : String(e);
    return typeof e.code === "string" && !message.includes(e.code) ? `${e.code}: ${message}` : message;
  });
  // a cause that is not an object (a string thrown or given as the cause) ends the chain
  const last = (under.at(-1) ?? err) as { cause?: unknown } | undefined;
  if (last?.cause !== undefined && last.cause !== null && typeof last.cause !== "object") out.push(String(last.cause));
  return out;
}

/** Turns any thrown error into its problem+json response (problemOf). */
export function onError(err: Error, c: Context, log: ErrorLog) {
  const p = problemOf(err, c.get("requestId"), log);
  return problem(c, p.status, p.code, p.detail, p.fields, p.headers);
}
