// Request ids: the client's `x-request-id` when it is a sane one, else a new `req_…` that is unique without costing a
// random draw per request (a random prefix per process, then a counter). Shared by the control API and the router.
// The prefix is drawn on the first request, not when the module loads: Workers refuse random values at global scope.
import { randomBase62 } from "./db/secrets.js";

const INCOMING = /^[A-Za-z0-9._-]{1,128}$/;
let prefix: string | undefined;
let counter = 0;

/** The id of a request that came with `incoming` as its x-request-id header. */
export function requestIdOf(incoming: string | string[] | undefined): string {
  if (typeof incoming === "string" && INCOMING.test(incoming)) return incoming;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  prefix ??= `req_${randomBase62(10)}`;
  return `${prefix}${counter.toString(36)}`;
}
