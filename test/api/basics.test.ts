import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.js";
import { expectedMigrations } from "../../api/db/journal.js";
import { openDb } from "../../api/db/open.js";
import { docsScriptReader } from "../../api/node.js";
import { createRowPoller } from "../../api/poll-hub.js";
import { VERSION } from "../../shared/version.js";
import { createTestApp, defaultSettings, silentLog, type TestApp } from "../helpers/app.js";
import { tempDbUrl } from "../helpers/db.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("health", () => {
  it("/healthz and /readyz answer without a token", async () => {
    expect((await t.call("GET", "/healthz")).json).toEqual({ status: "ok", version: VERSION });
    expect((await t.call("GET", "/readyz")).json).toEqual({
      status: "ready",
      checks: { database: "ok", migrations: "current" },
    });
  });

  it("/readyz fails with the pending migrations on a database that was never migrated", async () => {
    const tmp = tempDbUrl();
    const { client, store } = await openDb(tmp.url);
    const app = createApp({
      store,
      now: Date.now,
      log: silentLog,
      settings: defaultSettings(),
      waiter: createRowPoller(store),
      background: () => undefined,
      migrations: expectedMigrations,
    });
    const r = await app.request("/readyz");
    expect(r.status).toBe(503);
    const body = await r.json();
    expect(body.code).toBe("unavailable");
    expect(body.detail).toContain(expectedMigrations.expected[0]!.tag);
    expect(body.detail).toContain("llmgw migrate");
    client.close();
    tmp.cleanup();
  });
});

describe("errors", () => {
  it("answers unknown routes with 404 problem+json and a request id", async () => {
    const r = await t.call("GET", "/api/v1/nothing-here");
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.json).toMatchObject({ status: 404, code: "not_found", title: "Not found" });
    expect(r.json.requestId).toMatch(/^req_/);
    expect(r.headers.get("x-request-id")).toBe(r.json.requestId);
  });

  it("answers a wrong method with 405 and Allow", async () => {
    const r = await t.admin("PUT", "/api/v1/nodes/n1");
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, DELETE");
    expect(r.json.code).toBe("method_not_allowed");
    expect((await t.call("PATCH", "/api/v1/agents/register")).headers.get("allow")).toBe("POST");
  });

  it("keeps a caller's request id", async () => {
    const r = await t.call("GET", "/api/v1/nodes", { headers: { "x-request-id": "trace-123" } });
    expect(r.json.requestId).toBe("trace-123");
  });
});

describe("OpenAPI and docs", () => {
  it("serves an OpenAPI 3.1 document naming every route with an operationId", async () => {
    const r = await t.call("GET", "/openapi.json");
    expect(r.status).toBe(200);
    expect(r.json.openapi).toBe("3.1.0");
    const ops = Object.values(r.json.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) =>
      Object.values(p).map((o) => o.operationId),
    );
    expect(ops).toEqual(
      expect.arrayContaining([
        "registerNode",
        "postHeartbeat",
        "postShardStatus",
        "listNodes",
        "getNode",
        "cordonNode",
        "uncordonNode",
        "drainNode",
        "deleteNode",
        "listEvents",
        "createAdminToken",
        "createJoinToken",
      ]),
    );
    expect(new Set(ops).size).toBe(ops.length);
    expect(Object.keys(r.json.components.securitySchemes)).toEqual(["adminToken", "joinToken", "nodeToken"]);
  });

  it("serves interactive docs pointing at the document, with nothing from another origin", async () => {
    const r = await t.call("GET", "/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(r.text).toContain('"url":"/openapi.json"');
    expect(r.text).toContain('<script src="/docs/api-reference.js">');
    expect(r.text).not.toMatch(/https?:\/\//);
  });

  it("serves the API reference's script itself: gzipped when the browser takes it, 304 for a matching ETag", async () => {
    const docs = await createTestApp({ docsScript: docsScriptReader() });
    try {
      const plain = await docs.app.request("/docs/api-reference.js");
      expect(plain.status).toBe(200);
      expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      const text = await plain.text();
      expect(text).toContain("createApiReference");
      const zipped = await docs.app.request("/docs/api-reference.js", { headers: { "accept-encoding": "gzip, br" } });
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      const bytes = Buffer.from(await zipped.arrayBuffer());
      expect(bytes.length).toBeLessThan(text.length / 2);
      expect(gunzipSync(bytes).toString()).toBe(text);
      const again = await docs.app.request("/docs/api-reference.js", {
        headers: { "if-none-match": plain.headers.get("etag")! },
      });
      expect(again.status).toBe(304);
    } finally {
      await docs.close();
    }
  });

  it("says how to build the API reference's script when it is missing", async () => {
    const docs = await createTestApp({ docsScript: docsScriptReader("/nonexistent/api-reference.js") });
    try {
      const r = await docs.call("GET", "/docs/api-reference.js");
      expect(r.status).toBe(404);
      expect(r.json.detail).toContain("npm run build");
    } finally {
      await docs.close();
    }
  });
});
