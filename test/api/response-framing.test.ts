// How the control API's answers go on the wire, over real HTTP: a JSON answer (success or problem) is sent whole, with
// its length, not as a chunked stream, and every answer carries its x-request-id — the client's when it sent a sane one;
// a body over the limit is refused whether it declares its length or comes chunked.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, serveOverHttp, type TestApp } from "../helpers/app.js";

let t: TestApp;
let port: number;
let close: () => Promise<void>;
beforeAll(async () => {
  t = await createTestApp({ settings: { maxBodyBytes: 8192 } });
  ({ port, close } = await serveOverHttp(t));
});
afterAll(() => close());

function get(path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (ok, fail) => {
      const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (body += d));
        res.on("end", () => ok({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on("error", fail);
      req.end();
    },
  );
}

describe("answers on the wire", () => {
  it("a JSON answer comes whole with its length and a request id", async () => {
    const r = await get("/api/v1/nodes", { authorization: `Bearer ${t.adminToken}` });
    expect(r.status).toBe(200);
    expect(r.headers["transfer-encoding"]).toBeUndefined();
    expect(Number(r.headers["content-length"])).toBe(Buffer.byteLength(r.body));
    expect(r.headers["x-request-id"]).toMatch(/^req_/);
  });

  it("so does a problem, with the client's request id", async () => {
    const r = await get("/api/v1/nodes", { "x-request-id": "trace-42" });
    expect(r.status).toBe(401);
    expect(r.headers["content-type"]).toBe("application/problem+json");
    expect(r.headers["transfer-encoding"]).toBeUndefined();
    expect(Number(r.headers["content-length"])).toBe(Buffer.byteLength(r.body));
    expect(r.headers["x-request-id"]).toBe("trace-42");
    expect(JSON.parse(r.body).requestId).toBe("trace-42");
  });

  it("an answer a route builds itself still carries the request id", async () => {
    const r = await get("/openapi.json");
    expect(r.status).toBe(200);
    expect(r.headers["x-request-id"]).toMatch(/^req_/);
  });

  it("refuses a body over the limit, declared or chunked, with 413 problem+json", async () => {
    const post = (chunked: boolean) =>
      new Promise<{ status: number; body: string }>((ok, fail) => {
        const body = JSON.stringify({ nodeId: "n", padding: "x".repeat(20_000) });
        const req = request(
          {
            host: "127.0.0.1",
            port,
            method: "POST",
            path: "/api/v1/agents/register",
            headers: {
              authorization: `Bearer ${t.adminToken}`,
              "content-type": "application/json",
              ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) }),
            },
          },
          (res) => {
            let text = "";
            res.on("data", (d) => (text += d));
            res.on("end", () => ok({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on("error", fail);
        if (chunked) for (let i = 0; i < body.length; i += 1000) req.write(body.slice(i, i + 1000));
        else req.write(body);
        req.end();
      });
    for (const chunked of [false, true]) {
      const r = await post(chunked);
      expect(r.status).toBe(413);
      expect(JSON.parse(r.body).code).toBe("payload_too_large");
    }
  });
});
