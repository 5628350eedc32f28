// The control API's limit on request bodies. Hono's bodyLimit first asks every request for its body stream, which on
// Node makes @hono/node-server build the whole WHATWG Request of every call — an agent's GET poll included — and then
// read a JSON body through that stream rather than straight from the socket. Here a declared length is judged from
// the header alone, a request over HTTP/1.1 with neither length nor chunking has no body, and only the rest (a chunked
// body, or a request to the Worker over HTTP/2 or 3) is counted as it is read, by Hono's own middleware.
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

/** Answers `tooLarge` to a request whose body is over `maxSize` bytes, before the route reads it. */
export function limitBodies(
  maxSize: number,
  tooLarge: (c: Context) => Response | Promise<Response>,
): MiddlewareHandler {
  const counted = bodyLimit({ maxSize, onError: tooLarge });
  return async (c, next) => {
    const length = c.req.header("content-length");
    const chunked = c.req.header("transfer-encoding") !== undefined;
    if (length !== undefined && !chunked) return Number(length) > maxSize ? tooLarge(c) : next();
    const http1 = (c.env as { incoming?: { httpVersionMajor?: number } } | undefined)?.incoming?.httpVersionMajor === 1;
    if (length === undefined && !chunked && http1) return next();
    return counted(c, next);
  };
}
