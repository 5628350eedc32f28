// `llmgw ctl`'s failures and the exit codes scripts can rely on.

import type { Problem } from "../../shared/schemas/problem.js";
import { ApiCallError } from "../client.js";

/** Exit codes of `llmgw ctl`, documented in docs/operations.md. */
export const EXIT = { ok: 0, api: 1, usage: 2, unreachable: 3, notFound: 4 } as const;

/** A bad flag, argument or file: nothing was sent (exit 2). */
export class UsageError extends Error {}

/** The API refused a call (`problem` is its problem+json), answered badly, or could not be reached (`unreachable`). */
export class CtlError extends ApiCallError {
  constructor(
    status: number,
    message: string,
    readonly problem?: Problem,
    readonly unreachable = false,
  ) {
    super(status, message, problem?.code);
  }
}

/** The exit code for a failure: 2 usage, 3 unreachable, 4 not found, 1 for anything else. */
export function exitCodeOf(e: unknown): number {
  if (e instanceof UsageError) return EXIT.usage;
  if (e instanceof CtlError && e.unreachable) return EXIT.unreachable;
  if (e instanceof ApiCallError && e.status === 404) return EXIT.notFound;
  return EXIT.api;
}

/** The lines to print on stderr for a failure: the problem's detail, then each invalid field by its path. */
export function errorLines(e: unknown, prefix = ""): string[] {
  const head = prefix ? `${prefix}: ` : "";
  if (e instanceof CtlError && e.problem) {
    const p = e.problem;
    const fields = p.errors ?? [];
    // the detail already names one field; several read better one a line
    return [`${head}${p.detail}`, ...(fields.length > 1 ? fields.map((f) => `  ${f.path}: ${f.message}`) : [])];
  }
  return [`${head}${e instanceof Error ? e.message : String(e)}`];
}
