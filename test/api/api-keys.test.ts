import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.js";
import { readGeneration } from "../../api/db/cluster.js";
import { expectedMigrations } from "../../api/db/journal.js";
import { apiKeys } from "../../api/db/schema.js";
import { hashSecret } from "../../api/db/secrets.js";
import { createPollHub } from "../../api/poll-hub.js";
import { createKeyStore } from "../../api/router/keys.js";
import type { RouterDeps } from "../../api/router/types.js";
import { createTestApp, defaultSettings, silentLog, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const spec = {
  models: ["meta-llama/Llama-3.1-8B-Instruct", "qwen-7b"],
  requestsPerMinute: 600,
  tokensPerMinute: 200000,
  expiresAt: Date.UTC(2027, 0, 1),
};
const put = (name: string, body: unknown, headers?: Record<string, string>) =>
  t.admin("PUT", `/api/v1/api-keys/${name}`, { body, headers });
const SECRET = /^llmgw_key_[A-Za-z0-9]{40}$/;

describe("PUT/GET/DELETE /api/v1/api-keys/{name}", () => {
  it("creates (201) with the secret shown once, stored only as its hash", async () => {
    const r = await put("team-a", { spec });
    expect(r.status).toBe(201);
    expect(r.headers.get("etag")).toBe('"1"');
    expect(r.json).toMatchObject({
      name: "team-a",
      spec,
      status: { expired: false, secretIssuedAt: t.clock.now() },
      metadata: { version: 1, etag: '"1"' },
    });
    expect(r.json.secret).toMatch(SECRET);
    const [row] = await t.db.select().from(apiKeys).where(eq(apiKeys.name, "team-a"));
    expect(row!.hash).toBe(await hashSecret(r.json.secret));
    expect(JSON.stringify(row)).not.toContain(r.json.secret);
    const g = await t.admin("GET", "/api/v1/api-keys/team-a");
    expect(g.status).toBe(200);
    expect(g.headers.get("etag")).toBe('"1"');
    expect(JSON.stringify(g.json.spec)).toBe(JSON.stringify(spec));
    expect(g.json.secret).toBeUndefined();
    const list = await t.admin("GET", "/api/v1/api-keys");
    expect(list.json.items.map((k: { name: string }) => k.name)).toEqual(["team-a"]);
    expect(list.text).not.toContain(r.json.secret);
    expect(list.text).not.toContain(row!.hash);
  });

  it("replaces (200) keeping the secret and not showing it; a no-op PUT keeps the version; placement is not disturbed", async () => {
    const created = await put("team-b", { spec: {} });
    const [before] = await t.db.select().from(apiKeys).where(eq(apiKeys.name, "team-b"));
    const gen = await readGeneration(t.db);
    const same = await put("team-b", { name: "team-b", spec: {}, status: { expired: true }, metadata: { version: 9 } });
    expect(same.status).toBe(200);
    expect(same.json.metadata.version).toBe(1);
    expect(same.json.secret).toBeUndefined();
    const changed = await put("team-b", { spec: { requestsPerMinute: 5, models: [] } });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({
      spec: { requestsPerMinute: 5, models: [] },
      metadata: { version: 2, etag: '"2"' },
    });
    expect(changed.json.secret).toBeUndefined();
    const [after] = await t.db.select().from(apiKeys).where(eq(apiKeys.name, "team-b"));
    expect(after!.hash).toBe(before!.hash);
    expect(after!.hash).toBe(await hashSecret(created.json.secret));
    expect(await readGeneration(t.db)).toBe(gen);
  });

  it("shows a key past its expiresAt as expired", async () => {
    await put("old", { spec: { expiresAt: t.clock.now() - 1 } });
    expect((await t.admin("GET", "/api/v1/api-keys/old")).json.status.expired).toBe(true);
  });

  it("rotates: a new secret shown once, the old hash gone, the spec and version kept", async () => {
    const created = await put("rot", { spec: { requestsPerMinute: 10 } });
    t.clock.advance(1000);
    const r = await t.admin("POST", "/api/v1/api-keys/rot/rotate");
    expect(r.status).toBe(200);
    expect(r.json.secret).toMatch(SECRET);
    expect(r.json.secret).not.toBe(created.json.secret);
    expect(r.json).toMatchObject({
      spec: { requestsPerMinute: 10 },
      metadata: { version: 1 },
      status: { secretIssuedAt: t.clock.now() },
    });
    const [row] = await t.db.select().from(apiKeys).where(eq(apiKeys.name, "rot"));
    expect(row!.hash).toBe(await hashSecret(r.json.secret));
    expect((await t.admin("GET", "/api/v1/api-keys/rot")).json.secret).toBeUndefined();
    expect((await t.admin("POST", "/api/v1/api-keys/nope/rotate")).status).toBe(404);
  });

  it("honours If-Match and If-None-Match (412), and deletes (204, then 404)", async () => {
    await put("cond", { spec: {} });
    const stale = await put("cond", { spec: { requestsPerMinute: 1 } }, { "if-match": '"7"' });
    expect(stale.status).toBe(412);
    expect(stale.json.code).toBe("precondition_failed");
    expect((await put("cond", { spec: { requestsPerMinute: 1 } }, { "if-match": '"1"' })).status).toBe(200);
    const taken = await put("cond", { spec: {} }, { "if-none-match": "*" });
    expect(taken.status).toBe(412);
    expect(taken.json.detail).toContain("API key cond already exists");
    expect(taken.json.secret).toBeUndefined();
    expect((await put("nope", { spec: {} }, { "if-match": "*" })).status).toBe(412);
    expect((await t.admin("DELETE", "/api/v1/api-keys/cond", { headers: { "if-match": '"1"' } })).status).toBe(412);
    expect((await t.admin("DELETE", "/api/v1/api-keys/cond", { headers: { "if-match": '"2"' } })).status).toBe(204);
    expect((await t.admin("GET", "/api/v1/api-keys/cond")).status).toBe(404);
    expect((await t.admin("DELETE", "/api/v1/api-keys/cond")).status).toBe(404);
  });

  it.each([
    ["an unknown field", { colour: "blue" }, "spec.colour", "unknown field"],
    ["a zero limit", { requestsPerMinute: 0 }, "spec.requestsPerMinute", ""],
    ["a fractional limit", { tokensPerMinute: 1.5 }, "spec.tokensPerMinute", ""],
    ["models that are not a list", { models: "qwen-7b" }, "spec.models", ""],
    ["a negative expiry", { expiresAt: -1 }, "spec.expiresAt", ""],
  ])("refuses %s with 400 naming the field, writing nothing", async (_, bad, path, message) => {
    const r = await put("bad", { spec: bad });
    expect(r.status).toBe(400);
    const field = r.json.errors.find((e: { path: string }) => e.path === path);
    expect(field, JSON.stringify(r.json.errors)).toBeDefined();
    expect(field.message).toContain(message);
    expect((await t.admin("GET", "/api/v1/api-keys/bad")).status).toBe(404);
  });

  it("refuses an unknown top-level field, a name that differs from the path, and a bad name", async () => {
    expect((await put("x", { spec: {}, secret: "llmgw_key_mine" })).json.errors).toEqual([
      { path: "secret", message: "unknown field" },
    ]);
    expect((await put("x", { name: "y", spec: {} })).status).toBe(400);
    expect((await put("Not_Valid!", { spec: {} })).status).toBe(400);
  });

  it("is for admins only: no token 401, a node token 403, an API key's own secret 403 (it reaches only /v1/*)", async () => {
    const join = (await t.admin("POST", "/api/v1/join-tokens", { body: {} })).json.token;
    const node = (await t.call("POST", "/api/v1/agents/register", { token: join, body: registerBody("k1") })).json
      .nodeToken;
    const secret = (await put("caller", { spec: {} })).json.secret;
    for (const [method, path] of [
      ["GET", "/api/v1/api-keys"],
      ["GET", "/api/v1/api-keys/caller"],
      ["PUT", "/api/v1/api-keys/caller"],
      ["DELETE", "/api/v1/api-keys/caller"],
      ["POST", "/api/v1/api-keys/caller/rotate"],
    ] as const) {
      const body = method === "PUT" ? { spec: {} } : undefined;
      expect((await t.call(method, path, { body })).status, `${method} ${path}`).toBe(401);
      expect((await t.call(method, path, { token: node, body })).status, `${method} ${path}`).toBe(403);
      expect((await t.call(method, path, { token: secret, body })).status, `${method} ${path}`).toBe(403);
    }
  });
});

describe("API key changes reach this instance's router at once", () => {
  it("rotate, replace and delete make its key store read the key again", async () => {
    const keys = createKeyStore(t.store, { now: t.clock.now, ttlMs: 60_000 });
    const app = createApp({
      store: t.store,
      now: t.clock.now,
      log: silentLog,
      settings: defaultSettings(),
      migrations: expectedMigrations,
      waiter: createPollHub(t.store, 50),
      background: () => undefined,
      router: { keys } as unknown as RouterDeps,
    });
    const call = (method: string, path: string, body?: unknown) =>
      app.request(path, {
        method,
        headers: { authorization: `Bearer ${t.adminToken}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const first = (await (await call("PUT", "/api/v1/api-keys/live", { spec: { requestsPerMinute: 1 } })).json()) as {
      secret: string;
    };
    expect(await keys.identify(first.secret)).toEqual({
      id: expect.stringMatching(/^live@\d+$/),
      name: "live",
      requestsPerMinute: 1,
    });
    await call("PUT", "/api/v1/api-keys/live", { spec: { requestsPerMinute: 2, models: ["m"] } });
    expect(await keys.identify(first.secret)).toEqual({
      id: expect.stringMatching(/^live@\d+$/),
      name: "live",
      requestsPerMinute: 2,
      models: ["m"],
    });
    const second = (await (await call("POST", "/api/v1/api-keys/live/rotate")).json()) as { secret: string };
    expect(await keys.identify(first.secret)).toBeUndefined();
    expect(await keys.identify(second.secret)).toMatchObject({ name: "live" });
    expect((await call("DELETE", "/api/v1/api-keys/live")).status).toBe(204);
    expect(await keys.identify(second.secret)).toBeUndefined();
  });
});
