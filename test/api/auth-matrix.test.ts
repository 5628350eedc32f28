import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";

let t: TestApp;
let nodeToken: string;
let joinToken: string;
type Op = { method: string; path: string; security?: Record<string, string[]>[] };
let ops: Op[];

beforeAll(async () => {
  t = await createTestApp();
  joinToken = (await t.admin("POST", "/api/v1/join-tokens", { body: {} })).json.token;
  nodeToken = (await t.call("POST", "/api/v1/agents/register", { token: joinToken, body: registerBody("m1") })).json
    .nodeToken;
  const doc = (await t.call("GET", "/openapi.json")).json as {
    paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
  };
  ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path: path.replace("{node}", "m1").replace("{id}", "m1"),
      security: op.security,
    })),
  );
});
afterAll(() => t.close());

const schemes = (op: Op) => (op.security ?? []).flatMap((s) => Object.keys(s));

describe("every route of the OpenAPI document", () => {
  it("declares its security, and only the probes are public", () => {
    expect(ops.length).toBeGreaterThan(15);
    const pub = ops.filter((o) => schemes(o).length === 0).map((o) => `${o.method} ${o.path}`);
    expect(pub.sort()).toEqual(["GET /healthz", "GET /readyz"]);
  });

  it("refuses a missing or wrong token with 401 problem+json", async () => {
    for (const op of ops.filter((o) => schemes(o).length)) {
      for (const token of [undefined, "llmgw_adm_0000000000000000000000000000000000000000", "not-a-token"]) {
        const r = await t.call(op.method, op.path, {
          token,
          body: op.method === "GET" || op.method === "DELETE" ? undefined : {},
        });
        expect(r.status, `${op.method} ${op.path} with ${token ?? "no token"}`).toBe(401);
        expect(r.headers.get("content-type")).toBe("application/problem+json");
        expect(r.json.code).toBe("unauthorized");
      }
    }
  });

  it("refuses a token of the wrong kind with 403", async () => {
    for (const op of ops.filter((o) => schemes(o).length)) {
      const s = schemes(op);
      const wrong =
        s.includes("adminToken") && !s.includes("nodeToken")
          ? nodeToken
          : s.includes("nodeToken") && !s.includes("adminToken")
            ? t.adminToken
            : undefined;
      if (!wrong) continue;
      const r = await t.call(op.method, op.path, {
        token: wrong,
        body: op.method === "GET" || op.method === "DELETE" ? undefined : {},
      });
      expect(r.status, `${op.method} ${op.path}`).toBe(403);
      expect(r.json.code).toBe("forbidden");
    }
  });
});

describe("concurrent writes on the embedded file database", () => {
  it("serializes them: many registrations and heartbeats at once all succeed", async () => {
    const regs = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        t.call("POST", "/api/v1/agents/register", { token: t.adminToken, body: registerBody(`c${i}`) }),
      ),
    );
    expect(regs.map((r) => r.status)).toEqual(Array(24).fill(201));
    const beats = await Promise.all(
      regs.map((r, i) => t.call("POST", `/api/v1/agents/c${i}/heartbeat`, { token: r.json.nodeToken, body: {} })),
    );
    expect(beats.map((r) => r.status)).toEqual(Array(24).fill(200));
    const events = await t.admin("GET", "/api/v1/events?type=node_registered&limit=1000");
    expect(events.json.items.filter((e: { nodeId: string }) => /^c\d+$/.test(e.nodeId))).toHaveLength(24);
  });
});
