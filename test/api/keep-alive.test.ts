// Keep-alive after an early answer: a 401 or 413 sent before the request body was read says `connection: close` (the
// server will not read the rest for long, and drops the socket), so a keep-alive client opens a fresh connection for
// its next request instead of losing it; an answer to a request read to the end keeps the connection.
import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, serveOverHttp, type TestApp } from "../helpers/app.js";

let t: TestApp;
let port: number;
let close: () => Promise<void>;
beforeAll(async () => {
  t = await createTestApp();
  ({ port, close } = await serveOverHttp(t));
});
afterAll(() => close());

type Answer = { status: number; connection: string | undefined; socket: number };

/**
 * One request over `agent`: `send` bytes of a `length`-byte body are written and the rest only after the answer
 * (never, when `send` is less than `length` and `finish` is false), as a client still uploading when refused.
 */
function call(
  agent: Agent,
  o: { method: string; path: string; token?: string; length?: number; send?: number; finish?: boolean },
): Promise<Answer> {
  return new Promise((ok, fail) => {
    const length = o.length ?? 0;
    const req = request({
      host: "127.0.0.1",
      port,
      method: o.method,
      path: o.path,
      agent,
      headers: {
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        ...(length ? { "content-type": "application/json", "content-length": String(length) } : {}),
      },
    });
    let socket = 0;
    req.on("socket", (s) => s.once("connect", () => (socket = s.localPort ?? 0)));
    req.on("response", (res) => {
      socket ||= res.socket.localPort ?? 0;
      res.resume();
      res.on("end", () => {
        ok({ status: res.statusCode ?? 0, connection: res.headers.connection, socket });
        if (o.finish === false) req.destroy();
      });
    });
    // a refused upload may see its socket closed under it once answered
    req.on("error", (e) => (socket ? undefined : fail(e)));
    const sent = o.send ?? length;
    if (length) req.write("x".repeat(sent));
    if (o.finish !== false) req.end(length > sent ? "x".repeat(length - sent) : undefined);
  });
}

describe("keep-alive after an early answer", () => {
  it("a 401 answered before the body was read says connection: close; the next request succeeds", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const refused = await call(agent, {
      method: "POST",
      path: "/api/v1/tokens",
      token: "llmgw_adm_not-a-token-anyone-has-000000",
      length: 1_000_000,
      send: 64 * 1024,
      finish: false,
    });
    expect(refused.status).toBe(401);
    expect(refused.connection).toBe("close");
    const next = await call(agent, { method: "GET", path: "/healthz" });
    expect(next.status).toBe(200);
    agent.destroy();
  });

  it("a 413 for a body over the limit says connection: close; the next request succeeds", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const tooBig = await call(agent, {
      method: "POST",
      path: "/api/v1/tokens",
      token: t.adminToken,
      length: 3_000_000,
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.connection).toBe("close");
    const next = await call(agent, { method: "GET", path: "/healthz" });
    expect(next.status).toBe(200);
    agent.destroy();
  });

  it("a refusal of a request read to the end keeps the connection for the next one", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const refused = await call(agent, {
      method: "GET",
      path: "/api/v1/nodes",
      token: "llmgw_adm_nobody-000000000000000",
    });
    expect(refused.status).toBe(401);
    expect(refused.connection).toBe("keep-alive");
    const next = await call(agent, { method: "GET", path: "/healthz" });
    expect(next).toMatchObject({ status: 200, connection: "keep-alive", socket: refused.socket });
    agent.destroy();
  });
});

describe("fetch, one keep-alive pool", () => {
  it("six 1 MB uploads refused with 401 before their body is read, then six 3 MB ones refused with 413: every one answered", async () => {
    const url = `http://127.0.0.1:${port}/api/v1/tokens`;
    const statuses: (number | string)[] = [];
    for (const [token, size] of [
      ["llmgw_adm_not-a-token-anyone-has-000000", 1_000_000],
      [t.adminToken, 3_000_000],
    ] as const) {
      for (let i = 0; i < 6; i++) {
        const r = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "x".repeat(size) }),
        }).then(
          async (res) => {
            await res.text();
            return res.status;
          },
          (e: Error) => `${e.message}: ${(e.cause as Error | undefined)?.message}`,
        );
        statuses.push(r);
      }
    }
    expect(statuses).toEqual([...Array(6).fill(401), ...Array(6).fill(413)]);
  });
});
