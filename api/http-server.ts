// The Node HTTP server of one API instance: /v1/* goes straight to the router's node:http handler (the hot path of
// every inference request, no WHATWG Request per call), everything else to the Hono app through @hono/node-server.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { getRequestListener } from "@hono/node-server";
import type { RouterHandler } from "./router/handler.js";
import { isRouterPath } from "./router/request.js";

type Fetch = (request: Request) => Response | Promise<Response>;

/** Connections the kernel may hold for the server before it accepts them. */
export const LISTEN_BACKLOG = 4096;

/**
 * Marks the response `connection: close` while the server is closing, and (`unread`) when it is answered before its
 * request was read to the end (a 401 or 413 before the body): @hono/node-server drains such a body for at most 500 ms
 * and then destroys the socket, so a client reusing a connection announced as keep-alive would lose its next request.
 * The router reads the rest of a refused body itself, and says `connection: close` with its own 413.
 */
function closeWhen(server: Server, req: IncomingMessage, res: ServerResponse, unread: boolean) {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (!server.listening || (unread && !req.complete)) this.setHeader("connection", "close");
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse["writeHead"];
}

/**
 * Starts listening on `host:port` (0 for a free port), over HTTPS when given a certificate and key (HTTP/1.1 as
 * over plain HTTP: long-polls and SSE streams work the same); the caller waits for "listening" or "error".
 */
export function listen(
  app: { fetch: Fetch },
  router: RouterHandler | undefined,
  host: string,
  port: number,
  tls?: { cert: string; key: string },
): Server | HttpsServer {
  const hono = getRequestListener(app.fetch, { hostname: host });
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const toRouter = router !== undefined && isRouterPath(req.url);
    closeWhen(server, req, res, !toRouter);
    return toRouter ? router(req, res) : hono(req, res);
  };
  const server: Server = tls ? createHttpsServer(tls, handle) : createServer(handle);
  // a fleet reconnecting at once (agents back after a control-plane restart) overflows Node's default queue of 511
  // connections not yet accepted; the kernel caps this at net.core.somaxconn
  server.listen({ port, host, backlog: LISTEN_BACKLOG });
  return server;
}

/**
 * Stops a server within `deadlineMs`: no new connections, idle keep-alive ones closed now, each busy one closed
 * after its response (`connection: close`), and whatever is still open at the deadline cut. Resolves once closed.
 * The caller answers its parked long-polls first (it aborts their hub), so they are not what the deadline cuts.
 */
export function closeServer(server: Server, deadlineMs: number): Promise<void> {
  return new Promise<void>((done) => {
    const force = setTimeout(() => server.closeAllConnections(), deadlineMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      done();
    });
    server.closeIdleConnections();
    // a connection whose response finished after this point is idle until the client closes it: look again
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    idle.unref();
    server.once("close", () => clearInterval(idle));
  });
}
