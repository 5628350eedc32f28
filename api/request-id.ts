// Request ids: the client's `x-request-id` when it is a sane one, else a new `req_…` that is unique without costing a
// random draw per request (a random prefix per process, then a counter). Shared by the control API and the router.
import { randomBase62 } from "./secrets.js";

const INCOMING = /^[A-Za-z0-9._-]{1,128}$/;
const PREFIX = `req_${randomBase62(10)}`;
let counter = 0;

/** The id of a request that came with `incoming` as its x-request-id header. */
export function requestIdOf(incoming: string | string[] | undefined): string {
  if (typeof incoming === "string" && INCOMING.test(incoming)) return incoming;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${PREFIX}${counter.toString(36)}`;
}
