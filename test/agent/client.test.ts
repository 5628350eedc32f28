import { delay, HttpResponse, http, passthrough } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ApiCallError, createClient } from "../../agent/client.js";
import { registerBody } from "../helpers/inventory.js";
import { refusingPort } from "../helpers/refusing-port.js";
import { makeShard } from "./engines/shard.js";

const CP = "http://cp.test:8080";
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const REGISTERED = {
  nodeId: "n1",
  nodeToken: "llmgw_node_t1",
  heartbeatIntervalS: 30,
  pollWaitS: 25,
  nodeLostAfterS: 90,
};
const problem = (status: number, code: string, detail: string) =>
  HttpResponse.json(
    { type: `urn:llmgw:problem:${code}`, title: "x", status, detail, code, requestId: "req_1" },
    { status, headers: { "content-type": "application/problem+json" } },
  );

/** The error a call rejected with (fails the test when it resolved). */
async function failure(p: Promise<unknown>): Promise<ApiCallError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ApiCallError);
  return e as ApiCallError;
}

describe("client", () => {
  it("registers with the token as bearer and the request as JSON, and parses the answer", async () => {
    let seen: { auth: string | null; type: string | null; body: unknown } | undefined;
    server.use(
      http.post(`${CP}/api/v1/agents/register`, async ({ request }) => {
        seen = {
          auth: request.headers.get("authorization"),
          type: request.headers.get("content-type"),
          body: await request.json(),
        };
        return HttpResponse.json({ ...REGISTERED, extra: "ignored" });
      }),
    );
    const c = createClient({ server: `${CP}/` });
    const req = registerBody("n1");
    expect(await c.register(req, "llmgw_join_j")).toEqual(REGISTERED);
    expect(seen).toEqual({
      auth: "Bearer llmgw_join_j",
      type: "application/json",
      body: JSON.parse(JSON.stringify(req)),
    });
  });

  it("turns a problem+json refusal into an ApiCallError with the status and the problem's code", async () => {
    server.use(
      http.post(`${CP}/api/v1/agents/register`, () => problem(401, "unauthorized", "the node token is not valid")),
    );
    const e = await failure(createClient({ server: CP }).register(registerBody("n1"), "bad"));
    expect(e.status).toBe(401);
    expect(e.code).toBe("unauthorized");
    expect(e.message).toBe("POST /api/v1/agents/register: HTTP 401: the node token is not valid");
  });

  it("keeps the status of an error whose body is not a problem", async () => {
    server.use(
      http.post(
        `${CP}/api/v1/agents/n1/heartbeat`,
        () => new HttpResponse("<html>Bad Gateway</html>", { status: 502 }),
      ),
      http.post(`${CP}/api/v1/agents/n1/status`, () => HttpResponse.json({ message: "nope" }, { status: 503 })),
    );
    const c = createClient({ server: CP });
    const e1 = await failure(c.heartbeat("n1", {}, "t"));
    expect([e1.status, e1.code]).toEqual([502, undefined]);
    expect(e1.message).toMatch(/HTTP 502 with a body that is not JSON: <html>Bad Gateway/);
    const e2 = await failure(c.status("n1", { shards: [{ shardId: "s", state: "ready" }] }, "t"));
    expect([e2.status, e2.code]).toEqual([503, undefined]);
    expect(e2.message).toContain('HTTP 503: {"message":"nope"}');
  });

  it("calls a 200 whose body is not JSON status 0, 'not JSON'", async () => {
    server.use(http.post(`${CP}/api/v1/agents/register`, () => HttpResponse.text("welcome!")));
    const e = await failure(createClient({ server: CP }).register(registerBody("n1"), "t"));
    expect(e.status).toBe(0);
    expect(e.message).toMatch(/HTTP 200 with a body that is not JSON: welcome!/);
  });

  it("calls a 200 of the wrong shape status 0, 'unexpected answer', naming the field", async () => {
    server.use(http.post(`${CP}/api/v1/agents/register`, () => HttpResponse.json({ ...REGISTERED, nodeToken: 42 })));
    const e = await failure(createClient({ server: CP }).register(registerBody("n1"), "t"));
    expect(e.status).toBe(0);
    expect(e.message).toMatch(/^POST \/api\/v1\/agents\/register: unexpected answer \(nodeToken: /);
  });

  it("calls an empty 200 an unexpected answer about the body", async () => {
    server.use(http.post(`${CP}/api/v1/agents/n1/heartbeat`, () => new HttpResponse(null, { status: 200 })));
    const e = await failure(createClient({ server: CP }).heartbeat("n1", {}, "t"));
    expect(e.status).toBe(0);
    expect(e.message).toMatch(/unexpected answer \(body: /);
  });

  it("says it cannot reach a control plane that refuses the connection", async () => {
    const port = await refusingPort();
    const base = `http://127.0.0.1:${port}`;
    server.use(http.all(`${base}/*`, () => passthrough()));
    const e = await failure(createClient({ server: base }).register(registerBody("n1"), "t"));
    expect(e.status).toBe(0);
    expect(e.message).toBe(`POST /api/v1/agents/register: cannot reach ${base}: ECONNREFUSED`);
  });

  it("gives up on a control plane that does not answer in time", async () => {
    server.use(
      http.post(`${CP}/api/v1/agents/register`, async () => {
        await delay(5000);
        return HttpResponse.json(REGISTERED);
      }),
    );
    const t0 = Date.now();
    const e = await failure(createClient({ server: CP, timeoutMs: 50 }).register(registerBody("n1"), "t"));
    expect(e.status).toBe(0);
    expect(e.message).toMatch(/cannot reach http:\/\/cp\.test:8080: no answer within 50 ms$/);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("polls with index, wait and the node token, and parses the assignments", async () => {
    let url: URL | undefined;
    let auth: string | null = null;
    const shard = makeShard();
    server.use(
      http.get(`${CP}/api/v1/agents/:node/assignments`, ({ request }) => {
        url = new URL(request.url);
        auth = request.headers.get("authorization");
        return HttpResponse.json({ index: 8, shards: [shard] });
      }),
    );
    const a = await createClient({ server: CP }).poll("node 1", 7, 25, "llmgw_node_t1");
    expect(a).toEqual({ index: 8, shards: [shard], refused: [] });
    expect(url!.pathname).toBe("/api/v1/agents/node%201/assignments");
    expect(Object.fromEntries(url!.searchParams)).toEqual({ index: "7", wait: "25" });
    expect(auth).toBe("Bearer llmgw_node_t1");
  });

  it("lets an aborted poll reject with the abort, not as an API error", async () => {
    server.use(
      http.get(`${CP}/api/v1/agents/n1/assignments`, async () => {
        await delay(5000);
        return HttpResponse.json({ index: 1, shards: [] });
      }),
    );
    const ac = new AbortController();
    const p = createClient({ server: CP }).poll("n1", 0, 30, "t", ac.signal);
    setTimeout(() => ac.abort(), 20);
    const e = await p.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).not.toBeInstanceOf(ApiCallError);
    expect((e as Error).name).toBe("AbortError");
  });

  it("posts heartbeats and status reports to the node's own paths and parses the acknowledgement", async () => {
    const bodies: Record<string, unknown> = {};
    const ack = { nodeId: "n1", receivedAt: 5, heartbeatIntervalS: 30 };
    server.use(
      http.post(`${CP}/api/v1/agents/n1/:what`, async ({ request, params }) => {
        bodies[params.what as string] = await request.json();
        return HttpResponse.json(ack);
      }),
    );
    const c = createClient({ server: CP });
    expect(await c.heartbeat("n1", { memoryAvailableMiB: 3 }, "t")).toEqual(ack);
    expect(await c.status("n1", { shards: [{ shardId: "s", state: "ready" }] }, "t")).toEqual(ack);
    expect(bodies).toEqual({
      heartbeat: { memoryAvailableMiB: 3 },
      status: { shards: [{ shardId: "s", state: "ready" }] },
    });
  });
});
