import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { specDiff } from "../../api/audit.js";
import { sweepEvents } from "../../api/nodes/liveness.js";
import { get, login, post } from "../console/console.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";

let t: TestApp;
let ci: { id: string; token: string };
beforeAll(async () => {
  t = await createTestApp();
  const r = await t.admin("POST", "/api/v1/tokens", { body: { name: "ci", role: "admin" } });
  ci = { id: r.json.id, token: r.json.token };
  const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
  for (const id of ["n1", "n2", "n3"])
    await t.call("POST", "/api/v1/agents/register", { token: join.json.token, body: registerBody(id) });
});
afterAll(() => t.close());

type Ev = { type: string; kind: string; name: string; actor: { id: string; name: string; role: string } | null };
const as = (method: string, path: string, body?: unknown) => t.call(method, path, { token: ci.token, body });
const MODEL = {
  weightsPath: "/m/a",
  servedName: "a",
  profiles: [{ name: "p", engine: "vllm", gpuClass: "h100-80g", tp: 1, gpusPerNode: 1 }],
};

describe("the audit trail", () => {
  it.each<[string, () => Promise<unknown>, string, string, string]>([
    ["PUT a model (create)", () => as("PUT", "/api/v1/models/m1", { spec: MODEL }), "resource_created", "model", "m1"],
    [
      "PUT a model (update)",
      () => as("PUT", "/api/v1/models/m1", { spec: { ...MODEL, servedName: "b" } }),
      "resource_updated",
      "model",
      "m1",
    ],
    [
      "PUT a deployment",
      () => as("PUT", "/api/v1/deployments/d1", { spec: { model: "m1", replicas: 1 } }),
      "resource_created",
      "deployment",
      "d1",
    ],
    ["DELETE a deployment", () => as("DELETE", "/api/v1/deployments/d1"), "resource_deleted", "deployment", "d1"],
    [
      "PUT an API key",
      () => as("PUT", "/api/v1/api-keys/k1", { spec: { models: ["a"] } }),
      "resource_created",
      "api_key",
      "k1",
    ],
    ["rotate an API key", () => as("POST", "/api/v1/api-keys/k1/rotate"), "api_key_rotated", "api_key", "k1"],
    ["DELETE an API key", () => as("DELETE", "/api/v1/api-keys/k1"), "resource_deleted", "api_key", "k1"],
    ["cordon a node", () => as("POST", "/api/v1/nodes/n1/cordon"), "node_cordoned", "node", "n1"],
    ["uncordon a node", () => as("POST", "/api/v1/nodes/n1/uncordon"), "node_uncordoned", "node", "n1"],
    ["drain a node", () => as("POST", "/api/v1/nodes/n1/drain"), "node_draining", "node", "n1"],
    ["delete a node", () => as("DELETE", "/api/v1/nodes/n2"), "node_deleted", "node", "n2"],
    ["create a join token", () => as("POST", "/api/v1/join-tokens", {}), "join_token_created", "join_token", "*"],
    [
      "create an admin token",
      () => as("POST", "/api/v1/tokens", { name: "ops", role: "viewer" }),
      "admin_token_created",
      "admin_token",
      "*",
    ],
  ])("%s leaves an event with its actor", async (_, act, type, kind, name) => {
    const r = (await act()) as { status: number; json?: { id?: string } };
    expect(r.status).toBeLessThan(300);
    const [e] = (await t.admin("GET", "/api/v1/events?audit=true&limit=1")).json.items as Ev[];
    expect(e).toMatchObject({ type, kind, name: name === "*" ? r.json!.id : name });
    expect(e!.actor).toEqual({ id: ci.id, name: "ci", role: "admin" });
  });

  it("revocations are audited, and no event carries a secret", async () => {
    const j = await as("POST", "/api/v1/join-tokens", {});
    expect((await as("DELETE", `/api/v1/join-tokens/${j.json.id}`)).status).toBe(204);
    const tok = await as("POST", "/api/v1/tokens", { name: "tmp" });
    expect((await as("DELETE", `/api/v1/tokens/${tok.json.id}`)).status).toBe(204);
    const items = (await t.admin(`GET`, `/api/v1/events?actor=ci&limit=1000`)).json.items as Ev[];
    expect(items.slice(0, 4).map((e) => e.type)).toEqual([
      "admin_token_revoked",
      "admin_token_created",
      "join_token_revoked",
      "join_token_created",
    ]);
    const all = JSON.stringify(items);
    for (const secret of [ci.token, j.json.token, tok.json.token, t.adminToken]) expect(all).not.toContain(secret);
  });

  it("records a declaration's diff: changed top-level keys with before and after", async () => {
    const e = (await t.admin("GET", "/api/v1/events?kind=model&type=resource_updated")).json.items[0];
    expect(e.data.diff).toEqual([{ key: "servedName", before: '"a"', after: '"b"' }]);
  });

  it("filters by actor (id or name), kind and since, and keeps the old filters", async () => {
    const byId = (await t.admin("GET", `/api/v1/events?actor=${ci.id}&limit=1000`)).json.items as Ev[];
    const byName = (await t.admin("GET", "/api/v1/events?actor=ci&limit=1000")).json.items as Ev[];
    expect(byId.length).toBeGreaterThan(10);
    expect(byName).toEqual(byId);
    expect(byId.every((e) => e.actor?.id === ci.id)).toBe(true);
    const nodes = (await t.admin("GET", "/api/v1/events?kind=node")).json.items as Ev[];
    expect(nodes.map((e) => e.kind)).toEqual(nodes.map(() => "node"));
    expect((await t.admin("GET", "/api/v1/events?kind=node&node=n2")).json.items.map((e: Ev) => e.type)).toEqual([
      "node_deleted",
    ]);
    const later = new Date(t.clock.now() + 1000).toISOString();
    expect((await t.admin("GET", `/api/v1/events?since=${later}`)).json.items).toEqual([]);
    expect((await t.admin("GET", `/api/v1/events?since=${t.clock.now()}`)).json.items.length).toBeGreaterThan(0);
    expect((await t.admin("GET", "/api/v1/events?since=yesterday")).status).toBe(400);
    expect((await t.admin("GET", "/api/v1/events?type=node_registered")).json.items.length).toBe(3);
  });

  it("records console logins, failed ones without what was typed, and console node actions as the session", async () => {
    await post(t, "/admin/login", { token: "llmgw_adm_not-a-real-one", next: "/admin" });
    const failed = (await t.admin("GET", "/api/v1/events?type=console_login_failed")).json.items;
    expect(failed).toHaveLength(1);
    expect(failed[0].actor).toBeNull();
    expect(JSON.stringify(failed)).not.toContain("not-a-real-one");
    const s = await login(t, ci.token);
    const [ok] = (await t.admin("GET", "/api/v1/events?type=console_login")).json.items as Ev[];
    expect(ok!.actor).toEqual({ id: ci.id, name: "ci", role: "admin" });
    await post(t, "/admin/nodes/n3/cordon", { _csrf: s.csrf, confirm: "yes" }, s.cookie);
    const [c] = (await t.admin("GET", "/api/v1/events?node=n3&type=node_cordoned")).json.items;
    expect(c).toMatchObject({ kind: "node", name: "n3", actor: { id: ci.id, name: "ci" }, data: { via: "console" } });
  });

  it("shows the audit page in the nav, with who, what, when in UTC and the diff, escaped", async () => {
    await as("PUT", "/api/v1/models/m1", { spec: { ...MODEL, servedName: "<script>x</script>" } });
    const s = await login(t);
    const r = await get(t, "/admin/audit", s.cookie);
    expect(r.status).toBe(200);
    expect(r.text).toContain('href="/admin/audit" aria-current="page"');
    expect(r.text).toContain("servedName");
    expect(r.text).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(r.text).not.toContain("<script>x</script>");
    expect(r.text).toContain("&lt;script&gt;");
    const filtered = await get(t, "/admin/audit?kind=api_key&actor=%3Cb%3E", s.cookie);
    expect(filtered.text).toContain("No changes recorded that match");
    expect(filtered.text).not.toContain("<b>");
  });

  it("deletes events past the retention", async () => {
    const before = (await t.admin("GET", "/api/v1/events?limit=1000")).json.items.length;
    expect(await sweepEvents(t.store, t.clock.now() + 89 * 86_400_000, 90)).toBe(0);
    expect(await sweepEvents(t.store, t.clock.now() + 91 * 86_400_000, 90)).toBe(before);
    expect((await t.admin("GET", "/api/v1/events")).json.items).toEqual([]);
  });
});

describe("specDiff", () => {
  it.each([
    [{ a: 1 }, { a: 1 }, []],
    [undefined, { a: 1 }, [{ key: "a", after: "1" }]],
    [{ a: 1 }, undefined, [{ key: "a", before: "1" }]],
    [{ env: [["HF_TOKEN", "hf_secret"]] }, {}, [{ key: "env", before: '[["HF_TOKEN","***"]]' }]],
    [{ apiKey: "sk" }, { apiKey: "sk2" }, [{ key: "apiKey", before: '"***"', after: '"***"' }]],
  ])("diffs %j → %j", (a, b, want) => expect(specDiff(a, b)).toEqual(want));

  it("truncates long values", () => {
    const [c] = specDiff({}, { args: ["x".repeat(500)] });
    expect(c!.after!.length).toBe(120);
    expect(c!.after!.endsWith("…")).toBe(true);
  });
});
