import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Role } from "../../shared/schemas/token.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";
import { get, login, post } from "./console.js";

let t: TestApp;
const sessions = {} as Record<Role, { cookie: string; csrf: string }>;
beforeAll(async () => {
  t = await createTestApp();
  const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
  await t.call("POST", "/api/v1/agents/register", { token: join.json.token, body: registerBody("n1") });
  for (const role of ["viewer", "operator", "admin"] as const) {
    const tok = await t.admin("POST", "/api/v1/tokens", { body: { name: `console-${role}`, role } });
    sessions[role] = await login(t, tok.json.token);
  }
});
afterAll(() => t.close());

const adminState = async (id: string) => (await t.admin("GET", `/api/v1/nodes/${id}`)).json.adminState;
const form = (verb: string) => `<form method="post" action="/admin/nodes/n1/${verb}">`;

describe("the console by role", () => {
  it("shows a viewer every page but no action", async () => {
    const s = sessions.viewer;
    for (const path of ["/admin", "/admin/nodes", "/admin/nodes/n1", "/admin/deployments", "/admin/plan"])
      expect((await get(t, path, s.cookie)).status, path).toBe(200);
    const r = await get(t, "/admin/nodes/n1", s.cookie);
    for (const verb of ["cordon", "uncordon", "drain", "forget"]) expect(r.text).not.toContain(form(verb));
    expect(r.text).toContain("This token has the viewer role");
  });

  it("shows an operator cordon, uncordon and drain, not forget; an admin all four", async () => {
    const op = (await get(t, "/admin/nodes/n1", sessions.operator.cookie)).text;
    for (const verb of ["cordon", "uncordon", "drain"]) expect(op).toContain(form(verb));
    expect(op).not.toContain(form("forget"));
    const admin = (await get(t, "/admin/nodes/n1", sessions.admin.cookie)).text;
    for (const verb of ["cordon", "uncordon", "drain", "forget"]) expect(admin).toContain(form(verb));
  });

  it.each([
    ["viewer", "cordon", "operator"],
    ["viewer", "uncordon", "operator"],
    ["viewer", "forget", "admin"],
    ["operator", "forget", "admin"],
  ] as const)("refuses a %s's %s POST with 403 naming the role it needs", async (role, verb, needed) => {
    const s = sessions[role];
    const r = await post(t, `/admin/nodes/n1/${verb}`, { _csrf: s.csrf, confirm: "yes" }, s.cookie);
    expect(r.status).toBe(403);
    expect(r.text).toContain("nothing was changed");
    expect(r.text).toContain(`needs the ${needed} role`);
    expect(r.text).toContain(`this token has the ${role} role`);
    expect(await adminState("n1")).toBe("ready");
  });

  it("lets an operator cordon from the console", async () => {
    const s = sessions.operator;
    const r = await post(t, "/admin/nodes/n1/cordon", { _csrf: s.csrf, confirm: "yes" }, s.cookie);
    expect(r.status).toBe(303);
    expect(await adminState("n1")).toBe("cordoned");
  });
});
