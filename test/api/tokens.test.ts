import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("admin tokens", () => {
  it("creates a token shown once that works at once, and lists tokens without secrets", async () => {
    const r = await t.admin("POST", "/api/v1/tokens", { body: { name: "ci" } });
    expect(r.status).toBe(201);
    expect(r.json.token).toMatch(/^llmgw_adm_[A-Za-z0-9]{40}$/);
    const list = await t.call("GET", "/api/v1/tokens", { token: r.json.token });
    expect(list.status).toBe(200);
    expect(list.json.items.map((i: { name: string }) => i.name)).toEqual(["first-start", "ci"]);
    expect(list.text).not.toContain(r.json.token);
    expect(list.text).not.toMatch(/hash/);
  });

  it("revokes a token, but never the last one", async () => {
    const extra = await t.admin("POST", "/api/v1/tokens", { body: { name: "temp" } });
    expect((await t.admin("DELETE", `/api/v1/tokens/${extra.json.id}`)).status).toBe(204);
    expect((await t.call("GET", "/api/v1/tokens", { token: extra.json.token })).status).toBe(401);
    expect((await t.admin("DELETE", `/api/v1/tokens/${extra.json.id}`)).status).toBe(404);
    const items = (await t.admin("GET", "/api/v1/tokens")).json.items as { id: string }[];
    for (const i of items.slice(1)) await t.admin("DELETE", `/api/v1/tokens/${i.id}`);
    const last = await t.admin("DELETE", `/api/v1/tokens/${items[0]!.id}`);
    expect(last.status).toBe(409);
    expect(last.json.detail).toContain("last token with the admin role");
  });

  it("gives a token the role asked for (admin by default), shows it, and keeps the last admin-role token", async () => {
    const plain = await t.admin("POST", "/api/v1/tokens", { body: { name: "plain" } });
    expect(plain.json.role).toBe("admin");
    const viewer = await t.admin("POST", "/api/v1/tokens", { body: { name: "eyes", role: "viewer" } });
    expect(viewer.status).toBe(201);
    expect(viewer.json).toMatchObject({ name: "eyes", role: "viewer" });
    const items = (await t.admin("GET", "/api/v1/tokens")).json.items as { id: string; role: string }[];
    expect(items.find((i) => i.id === viewer.json.id)?.role).toBe("viewer");
    const bad = await t.admin("POST", "/api/v1/tokens", { body: { name: "x", role: "root" } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].path).toBe("role");
    // a viewer token does not count towards keeping an admin-role token
    expect((await t.admin("DELETE", `/api/v1/tokens/${plain.json.id}`)).status).toBe(204);
    const first = items.find((i) => i.role === "admin" && i.id !== plain.json.id)!;
    expect((await t.admin("DELETE", `/api/v1/tokens/${first.id}`)).status).toBe(409);
    expect((await t.admin("DELETE", `/api/v1/tokens/${viewer.json.id}`)).status).toBe(204);
  });

  it("documents role with its default in the OpenAPI document", async () => {
    const doc = (await t.call("GET", "/openapi.json")).json;
    const role = doc.components.schemas.CreateAdminToken.properties.role;
    expect(JSON.stringify(role)).toContain('"default":"admin"');
    expect(doc.components.schemas.Role.enum).toEqual(["admin", "operator", "viewer"]);
    expect(doc.components.schemas.CreateAdminToken.required).toEqual(["name"]);
  });

  it("refuses bad bodies and callers", async () => {
    const empty = await t.admin("POST", "/api/v1/tokens", { body: {} });
    expect(empty.status).toBe(400);
    expect(empty.json.errors[0].path).toBe("name");
    const extra = await t.admin("POST", "/api/v1/tokens", { body: { name: "x", admin: true } });
    expect(extra.json.errors).toEqual([{ path: "admin", message: "unknown field" }]);
    expect((await t.call("POST", "/api/v1/tokens", { body: { name: "x" } })).status).toBe(401);
    const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
    const byJoin = await t.call("POST", "/api/v1/tokens", { token: join.json.token, body: { name: "x" } });
    expect(byJoin.status).toBe(403);
    expect(byJoin.json.detail).toContain("a join token was sent");
    expect(
      (await t.call("GET", "/api/v1/tokens", { headers: { authorization: "Basic YWRtaW46YWRtaW4=" } })).status,
    ).toBe(401);
  });
});

describe("join tokens", () => {
  it("creates, lists with uses and expiry, and revokes", async () => {
    const r = await t.admin("POST", "/api/v1/join-tokens", {
      body: { name: "rack-12", expiresInS: 3600, maxUses: 18 },
    });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      name: "rack-12",
      maxUses: 18,
      uses: 0,
      usable: true,
      expiresAt: t.clock.now() + 3_600_000,
    });
    expect(r.json.token).toMatch(/^llmgw_join_/);
    const list = await t.admin("GET", "/api/v1/join-tokens");
    expect(list.json.items.find((j: { id: string }) => j.id === r.json.id)).toMatchObject({ uses: 0, usable: true });
    t.clock.advance(3_600_000);
    const later = await t.admin("GET", "/api/v1/join-tokens");
    expect(later.json.items.find((j: { id: string }) => j.id === r.json.id).usable).toBe(false);
    expect((await t.admin("DELETE", `/api/v1/join-tokens/${r.json.id}`)).status).toBe(204);
    expect((await t.admin("DELETE", `/api/v1/join-tokens/${r.json.id}`)).status).toBe(404);
    const after = await t.admin("GET", "/api/v1/join-tokens");
    expect(after.json.items.some((j: { id: string }) => j.id === r.json.id)).toBe(false);
  });

  it("validates expiry and uses", async () => {
    const r = await t.admin("POST", "/api/v1/join-tokens", { body: { expiresInS: -5, maxUses: 0 } });
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["expiresInS", "maxUses"]);
    expect((await t.call("POST", "/api/v1/join-tokens", { body: {} })).status).toBe(401);
  });
});
