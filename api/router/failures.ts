// How calls to engines fail, sorted into what may be retried on another replica (nothing reached the engine) and
// what may not; and the shape of the upstream client (undici on Node, in upstream.ts). No runtime imports.

export type Timeouts = { connectMs: number; firstByteMs: number; idleMs: number };
export const DEFAULT_TIMEOUTS: Timeouts = { connectMs: 5_000, firstByteMs: 600_000, idleMs: 120_000 };

export type UpstreamResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Uint8Array> & { destroy(): void };
};
/**
 * What stops a call to an engine: an EventEmitter with `aborted` that emits "abort" once (undici takes it as a signal;
 * it costs a fraction of an AbortController, and the router makes one per request).
 */
export type Cancel = {
  readonly aborted: boolean;
  once(event: "abort", listener: () => void): unknown;
  removeListener(event: "abort", listener: () => void): unknown;
};

export type Upstream = {
  send(
    url: string,
    path: string,
    body: string,
    headers: Record<string, string>,
    signal: Cancel,
  ): Promise<UpstreamResponse>;
  close(): Promise<void>;
};

/** Failure kinds, as the metrics and the retry decision name them. */
export type FailureKind =
  | "refused"
  | "reset"
  | "connect_timeout"
  | "first_byte_timeout"
  | "idle_timeout"
  | "aborted"
  | "other";

/** What kind of failure an undici error is. */
export function failureKind(e: unknown): FailureKind {
  const err = (e ?? {}) as { code?: string; name?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === "ECONNREFUSED") return "refused";
  if (code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET") return "reset";
  if (code === "UND_ERR_CONNECT_TIMEOUT") return "connect_timeout";
  if (code === "UND_ERR_HEADERS_TIMEOUT") return "first_byte_timeout";
  if (code === "UND_ERR_BODY_TIMEOUT") return "idle_timeout";
  if (code === "UND_ERR_ABORTED" || err.name === "AbortError") return "aborted";
  return "other";
}

/** Marks an upstream error as coming after the whole request was written: the engine may have started it. */
export const afterWrite = <E>(e: E): E => (e && typeof e === "object" ? Object.assign(e, { requestWritten: true }) : e);

/** True when an upstream error came after the whole request was written (afterWrite). */
export const requestWritten = (e: unknown) => !!(e && typeof e === "object" && "requestWritten" in e);

/**
 * True when the failure proves the engine never received the request, so another replica may run it: no connection
 * (refused, or none within the connect timeout), or a connection reset before the request had been written whole. A
 * reset after that may come from an engine that already started the completion: running it twice is worse than an
 * error, so it is not retried.
 */
export const retriable = (k: FailureKind, written = false) =>
  k === "refused" || k === "connect_timeout" || (k === "reset" && !written);
