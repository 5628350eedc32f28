import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_ROLES, roleAllows } from "../../api/roles.js";
import type { Role } from "../../shared/schemas/token.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";

let t: TestApp;
let nodeToken: string;
let joinToken: string;
type Op = { method: string; path: string; route: string; security?: Record<string, string[]>[] };
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
      path: path.replace(/\{\w+\}/g, "m1"),
      route: `${method.toUpperCase()} ${path}`,
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

describe("roles: every admin-token route against api/roles.ts", () => {
  const adminOps = () => ops.filter((o) => schemes(o).includes("adminToken"));
  const tokenOf = async (role: Role) =>
    (await t.admin("POST", "/api/v1/tokens", { body: { name: `matrix-${role}`, role } })).json.token as string;
  const send = (op: Op, token: string) =>
    t.call(op.method, op.path, { token, body: op.method === "GET" || op.method === "DELETE" ? undefined : {} });

  it("names every admin-token route of the document, and nothing else", () => {
    expect(Object.keys(ROUTE_ROLES).sort()).toEqual(
      adminOps()
        .map((o) => o.route)
        .sort(),
    );
    for (const o of adminOps()) if (o.method === "GET") expect(ROUTE_ROLES[o.route], o.route).toBe("viewer");
  });

  it("a viewer reads every GET (2xx or 404) and gets 403 naming its role on every write", async () => {
    const viewer = await tokenOf("viewer");
    for (const op of adminOps()) {
      const r = await send(op, viewer);
      if (op.method === "GET") {
        expect(r.status === 404 || (r.status >= 200 && r.status < 300), `${op.route}: ${r.status}`).toBe(true);
        continue;
      }
      expect(r.status, op.route).toBe(403);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.json.code).toBe("forbidden");
      expect(r.json.detail).toContain("this token has the viewer role");
      expect(r.json.detail).toContain(`needs the ${ROUTE_ROLES[op.route]} role`);
    }
  });

  it("an operator may change models, deployments and node states, not credentials or node deletion", async () => {
    const operator = await tokenOf("operator");
    const refused: string[] = [];
    for (const op of adminOps().filter((o) => o.method !== "GET")) {
      const r = await send(op, operator);
      expect(r.status, op.route).not.toBe(401);
      if (r.status === 403) {
        expect(r.json.detail, op.route).toContain("needs the admin role; this token has the operator role");
        refused.push(op.route);
      }
    }
    expect(refused.sort()).toEqual(
      Object.entries(ROUTE_ROLES)
        .filter(([, needed]) => !roleAllows("operator", needed))
        .map(([route]) => route)
        .sort(),
    );
    expect(refused).toEqual(
      expect.arrayContaining([
        "POST /api/v1/tokens",
        "DELETE /api/v1/tokens/{id}",
        "POST /api/v1/join-tokens",
        "PUT /api/v1/api-keys/{name}",
        "POST /api/v1/api-keys/{name}/rotate",
        "DELETE /api/v1/nodes/{id}",
      ]),
    );
    const model = {
      weightsPath: "/models/qwen3-8b",
      profiles: [{ name: "tp1", engine: "vllm", gpuClass: "h100-80g", tp: 1, gpusPerNode: 1 }],
    };
    const put = await t.call("PUT", "/api/v1/models/m-op", { token: operator, body: { spec: model } });
    expect(put.status, put.text).toBe(201);
    expect((await t.call("POST", "/api/v1/nodes/m1/cordon", { token: operator, body: {} })).status).toBe(200);
    expect((await t.call("POST", "/api/v1/nodes/m1/drain", { token: operator, body: {} })).status).toBe(200);
    expect((await t.call("POST", "/api/v1/nodes/m1/uncordon", { token: operator, body: {} })).status).toBe(200);
  });

  it("an admin is refused no route for its role", async () => {
    for (const op of adminOps()) {
      const r = await send(op, t.adminToken);
      expect(r.status === 403 && /role/.test(r.json?.detail ?? ""), op.route).toBe(false);
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
