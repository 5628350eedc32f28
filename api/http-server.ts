// The Node HTTP server of one API instance: /v1/* goes straight to the router's node:http handler (the hot path of
// every inference request, no WHATWG Request per call), everything else to the Hono app through @hono/node-server.
import { createServer, type Server } from "node:http";
import { getRequestListener } from "@hono/node-server";
import type { RouterHandler } from "./router/handler.js";
import { isRouterPath } from "./router/request.js";

type Fetch = (request: Request) => Response | Promise<Response>;

/** Starts listening on `host:port` (0 for a free port); the caller waits for "listening" or "error". */
export function listen(app: { fetch: Fetch }, router: RouterHandler | undefined, host: string, port: number): Server {
  const hono = getRequestListener(app.fetch, { hostname: host });
  const server = createServer((req, res) => (router && isRouterPath(req.url) ? router(req, res) : hono(req, res)));
  server.listen(port, host);
  return server;
}
