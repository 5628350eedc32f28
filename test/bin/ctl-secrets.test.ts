import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCtl } from "../../bin/ctl-cli.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // ctl talks through global fetch; here it reaches the in-process app
  vi.stubGlobal("fetch", (input: RequestInfo | URL, init?: RequestInit) =>
    t.app.request(new Request(input, init).url.replace("http://ctl.test", ""), init),
  );
});
afterAll(async () => {
  vi.unstubAllGlobals();
  await t.close();
});

async function ctl(args: string[], token = t.adminToken) {
  let stdout = "";
  let stderr = "";
  const code = await runCtl(args, {
    out: (s) => void (stdout += s),
    err: (s) => void (stderr += s),
    env: { LLMGW_SERVER: "http://ctl.test", LLMGW_TOKEN: token },
    stdin: [],
  });
  return { code, stdout, stderr };
}

describe("llmgw ctl tokens create --role", () => {
  it("creates a viewer token that reads but may not write, and lists its role", async () => {
    const r = await ctl(["tokens", "create", "dash", "--role", "viewer"]);
    expect([r.code, r.stderr]).toEqual([0, expect.stringMatching(/^viewer token dash \(tok_\w+\) created/)]);
    const viewer = r.stdout.trim();
    expect((await ctl(["tokens", "list"], viewer)).stdout).toMatch(/tok_\w+\s+dash\s+viewer\s/);
    const refused = await ctl(["tokens", "create", "more"], viewer);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("needs the admin role; this token has the viewer role");
  });

  it("creates an admin token without --role, and refuses an unknown role before any request", async () => {
    const r = await ctl(["tokens", "create", "ops", "--json"]);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: "ops", role: "admin" });
    const bad = await ctl(["tokens", "create", "x", "--role", "root"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--role: expected admin, operator or viewer");
  });
});
