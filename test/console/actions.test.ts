import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";
import { get, login, post } from "./console.js";

let t: TestApp;
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  t = await createTestApp();
  const join = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
  for (const id of ["n1", "n2"])
    await t.call("POST", "/api/v1/agents/register", { token: join.json.token, body: registerBody(id) });
  session = await login(t);
});
afterAll(() => t.close());

const adminState = async (id: string) => (await t.admin("GET", `/api/v1/nodes/${id}`)).json.adminState;
const eventTypes = async (id: string) =>
  (await t.admin("GET", `/api/v1/events?node=${id}`)).json.items.map((e: { type: string }) => e.type);

describe("node actions from the console", () => {
  it("shows cordon, uncordon and drain as POST forms carrying the session's CSRF token", async () => {
    const r = await get(t, "/admin/nodes/n1", session.cookie);
    for (const verb of ["cordon", "uncordon", "drain"]) {
      expect(r.text).toContain(
        `<form method="post" action="/admin/nodes/n1/${verb}"><input type="hidden" name="_csrf" value="${session.csrf}"/>`,
      );
    }
  });

  it.each([
    ["no CSRF token", {}, {}],
    ["a wrong CSRF token", { _csrf: "A".repeat(32) }, {}],
    ["an empty CSRF token", { _csrf: "" }, {}],
    ["the right token from another site", "own", { origin: "https://evil.example" }],
    ["the right token in a cross-site request", "own", { "sec-fetch-site": "cross-site" }],
  ] as const)("refuses a cordon with %s: 403, and nothing changes", async (_, form, headers) => {
    const events = await eventTypes("n1");
    const body = form === "own" ? { _csrf: session.csrf } : form;
    const r = await post(t, "/admin/nodes/n1/cordon", body, session.cookie, headers);
    expect(r.status).toBe(403);
    expect(r.text).toContain("nothing was changed");
    expect(await adminState("n1")).toBe("ready");
    expect(await eventTypes("n1")).toEqual(events);
  });

  it("refuses another session's CSRF token", async () => {
    const other = await login(t);
    expect((await post(t, "/admin/nodes/n1/cordon", { _csrf: other.csrf }, session.cookie)).status).toBe(403);
    expect(await adminState("n1")).toBe("ready");
  });

  it("sends a POST without a session to the login page, changing nothing", async () => {
    const r = await post(t, "/admin/nodes/n1/cordon", { _csrf: session.csrf });
    expect(r.status).toBe(303);
    expect(r.location).toBe("/admin/login");
    expect(await adminState("n1")).toBe("ready");
  });

  it.each(["cordon", "drain", "forget"])(
    "asks before it will %s: a confirmation page, nothing changed",
    async (verb) => {
      const events = await eventTypes("n1");
      const r = await post(t, `/admin/nodes/n1/${verb}`, { _csrf: session.csrf }, session.cookie);
      expect(r.status).toBe(200);
      expect(r.text).toMatch(/<h1>\w+ n1\?<\/h1>/);
      expect(r.text).toContain("No shards are on it");
      expect(r.text).toContain(
        `<form method="post" action="/admin/nodes/n1/${verb}"><input type="hidden" name="_csrf" value="${session.csrf}"/><input type="hidden" name="confirm" value="yes"/>`,
      );
      expect(r.text).toContain('<a class="button" href="/admin/nodes/n1">Cancel</a>');
      expect(await adminState("n1")).toBe("ready");
      expect(await eventTypes("n1")).toEqual(events);
    },
  );

  it("refuses a confirmed action without the session's CSRF token", async () => {
    const r = await post(t, "/admin/nodes/n1/forget", { confirm: "yes" }, session.cookie);
    expect(r.status).toBe(403);
    expect(await adminState("n1")).toBe("ready");
  });

  it("cordons with the right token, once confirmed, with an event, and the node page says so", async () => {
    const r = await post(t, "/admin/nodes/n1/cordon", { _csrf: session.csrf, confirm: "yes" }, session.cookie, {
      origin: "http://localhost",
    });
    expect(r.status).toBe(303);
    expect(r.location).toBe("/admin/nodes/n1?done=cordon");
    expect(await adminState("n1")).toBe("cordoned");
    expect((await eventTypes("n1"))[0]).toBe("node_cordoned");
    const page = await get(t, r.location!, session.cookie);
    expect(page.text).toContain("n1 cordoned: no new placements.");
    expect(page.text).toContain('<span class="badge" data-state="cordoned">cordoned</span>');
    expect(page.text).toMatch(/<button type="submit" class="danger" disabled="">Cordon<\/button>/);
  });

  it("drains and uncordons the same way", async () => {
    await post(t, "/admin/nodes/n2/drain", { _csrf: session.csrf, confirm: "yes" }, session.cookie);
    expect(await adminState("n2")).toBe("draining");
    await post(t, "/admin/nodes/n2/uncordon", { _csrf: session.csrf }, session.cookie);
    expect(await adminState("n2")).toBe("ready");
    expect((await eventTypes("n2")).slice(0, 2)).toEqual(["node_uncordoned", "node_draining"]);
    await t.settle();
  });

  it("answers an unknown node or verb without changing anything", async () => {
    const r = await post(t, "/admin/nodes/nope/cordon", { _csrf: session.csrf, confirm: "yes" }, session.cookie);
    expect(r.location).toBe("/admin/nodes/nope");
    expect((await get(t, "/admin/nodes/nope", session.cookie)).status).toBe(404);
    expect((await post(t, "/admin/nodes/n2/delete", { _csrf: session.csrf }, session.cookie)).status).toBe(404);
    expect(await adminState("n2")).toBe("ready");
  });

  it("forgets a node once confirmed: gone, with an event, and the nodes page says so", async () => {
    const r = await post(t, "/admin/nodes/n2/forget", { _csrf: session.csrf, confirm: "yes" }, session.cookie);
    expect(r.status).toBe(303);
    expect(r.location).toBe("/admin/nodes?forgot=n2");
    expect((await t.admin("GET", "/api/v1/nodes/n2")).status).toBe(404);
    expect((await eventTypes("n2"))[0]).toBe("node_deleted");
    expect((await get(t, r.location!, session.cookie)).text).toContain("n2 forgotten: its agent must register again");
    await t.settle();
  });
});
