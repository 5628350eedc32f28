// An error as it crosses between serve's two threads. A message alone loses what callers tell failures apart by — a
// write refused for a full queue is 503 and the agent backs off, any other error 500 — so the error's name, codes and
// status go with it, and its causes.
export type ThreadError = {
  message: string;
  name?: string;
  code?: string;
  extendedCode?: string;
  status?: number;
  cause?: ThreadError;
};

/** Causes kept at most. */
const DEPTH = 8;

/** `e` as it can be posted to the other thread (structured clone keeps an Error's message, not its codes). */
export function toThreadError(e: unknown, depth = 0): ThreadError {
  if (!e || typeof e !== "object") return { message: String(e) };
  const x = e as Record<string, unknown>;
  const out: ThreadError = { message: typeof x.message === "string" ? x.message : String(e) };
  if (typeof x.name === "string" && x.name !== "Error") out.name = x.name;
  if (typeof x.code === "string") out.code = x.code;
  if (typeof x.extendedCode === "string") out.extendedCode = x.extendedCode;
  if (typeof x.status === "number") out.status = x.status;
  if (x.cause !== undefined && depth < DEPTH) out.cause = toThreadError(x.cause, depth + 1);
  return out;
}

/** The error `t` stands for, on the thread that received it. */
export function fromThreadError(t: ThreadError): Error {
  const { message, cause, ...fields } = t;
  const e = new Error(message, cause ? { cause: fromThreadError(cause) } : undefined);
  return Object.assign(e, fields);
}
