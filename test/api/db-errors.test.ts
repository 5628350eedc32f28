// The database-failure classifier on real error objects: a real libSQL client pointed at a closed port, an
// unresolvable host, a server answering 401, a file in a missing directory, a full and a locked file database.
import { createServer } from "node:http";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/libsql";
import { afterAll, describe, expect, it } from "vitest";
import { dbFailure, describeDbError } from "../../api/db/db-errors.js";
import { ApiError } from "../../api/errors.js";
import { tempDir } from "../helpers/db.js";
import { refusingPort } from "../helpers/refusing-port.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** What a real query on `url` throws. */
async function thrown(url: string, authToken?: string): Promise<unknown> {
  let client: ReturnType<typeof createClient> | undefined;
  try {
    // a file the local driver cannot open throws here already
    client = createClient({ url, authToken, timeout: 5000 });
    await drizzle(client).run(sql`SELECT 1`);
  } catch (e) {
    return e;
  } finally {
    client?.close();
  }
  throw new Error(`SELECT 1 on ${url} succeeded`);
}

describe("dbFailure", () => {
  it("a remote database on a closed port: connection refused", async () => {
    const port = await refusingPort();
    const f = dbFailure(await thrown(`http://127.0.0.1:${port}`));
    expect(f).toMatchObject({ status: 503, code: "unavailable", kind: "refused" });
    expect(f!.cause).toBe(`connection refused (connect ECONNREFUSED 127.0.0.1:${port})`);
  });

  it("a host name that does not resolve: DNS name not found", async () => {
    const f = dbFailure(await thrown("libsql://no-such-host.invalid"));
    expect(f).toMatchObject({ status: 503, code: "unavailable", kind: "dns" });
    expect(f!.cause).toMatch(/^DNS (name not found|lookup failed).*no-such-host\.invalid/);
  });

  it("a server refusing the auth token (HTTP 401): authentication failed", async () => {
    const server = createServer((_req, res) => res.writeHead(401).end("Unauthorized"));
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    try {
      const port = (server.address() as { port: number }).port;
      const f = dbFailure(await thrown(`http://127.0.0.1:${port}`, "not-the-token"));
      expect(f).toMatchObject({ status: 503, code: "unavailable", kind: "auth" });
      expect(f!.cause).toMatch(/^authentication failed: .*HTTP 401.*LLMGW_DB_AUTH_TOKEN/);
    } finally {
      server.close();
    }
  });

  it("a server failing (HTTP 500) is the database server's answer, not ours", async () => {
    const server = createServer((_req, res) => res.writeHead(500).end("boom"));
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    try {
      const port = (server.address() as { port: number }).port;
      expect(dbFailure(await thrown(`http://127.0.0.1:${port}`))).toMatchObject({ kind: "server" });
    } finally {
      server.close();
    }
  });

  it("a file in a directory that does not exist: cannot open the database file, with its path", async () => {
    const path = join(tmp.dir, "no", "such", "dir", "llmgw.db");
    const f = dbFailure(await thrown(`file:${path}`));
    expect(f).toMatchObject({ status: 503, code: "unavailable", kind: "cantopen" });
    expect(f!.cause).toContain(`cannot open the database file ${path} (SQLITE_CANTOPEN`);
  });

  it("a full database (SQLITE_FULL) under drizzle's wrapper", async () => {
    const client = createClient({ url: `file:${join(tmp.dir, "full.db")}` });
    await client.execute("CREATE TABLE t (x)");
    await client.execute("PRAGMA max_page_count = 3");
    const e = await drizzle(client)
      .run(sql`INSERT INTO t VALUES (randomblob(100000))`)
      .catch((x: unknown) => x);
    client.close();
    expect(dbFailure(e)).toEqual({
      status: 503,
      code: "unavailable",
      kind: "full",
      cause: "database or disk is full (SQLITE_FULL)",
    });
    expect(describeDbError(e)).toBe("database or disk is full (SQLITE_FULL)");
  });

  it("a database locked by another writer (SQLITE_BUSY)", async () => {
    const url = `file:${join(tmp.dir, "busy.db")}`;
    const a = createClient({ url });
    const b = createClient({ url });
    await a.execute("CREATE TABLE t (x)");
    await b.execute("PRAGMA busy_timeout = 0");
    const tx = await a.transaction("write");
    await tx.execute("INSERT INTO t VALUES (1)");
    const e = await b.execute("INSERT INTO t VALUES (2)").catch((x: unknown) => x);
    await tx.rollback();
    a.close();
    b.close();
    expect(dbFailure(e)).toMatchObject({ kind: "busy", cause: "database is locked (SQLITE_BUSY)" });
  });

  it("a closed client", async () => {
    const client = createClient({ url: `file:${join(tmp.dir, "closed.db")}` });
    client.close();
    const e = await client.execute("SELECT 1").catch((x: unknown) => x);
    expect(dbFailure(e)).toMatchObject({ kind: "closed" });
  });

  it("a directory that cannot be made for the file (node:fs)", () => {
    const e = Object.assign(new Error("ENOTDIR: not a directory, mkdir '/x/y'"), {
      code: "ENOTDIR",
      syscall: "mkdir",
      path: "/x/y",
    });
    expect(dbFailure(e)).toMatchObject({
      kind: "cantopen",
      cause: "cannot create the database's directory (ENOTDIR: not a directory, mkdir '/x/y')",
    });
  });

  it("is undefined for what is not the database's failure: a constraint, a bug, an API error", async () => {
    const client = createClient({ url: `file:${join(tmp.dir, "unique.db")}` });
    await client.execute("CREATE TABLE t (x UNIQUE)");
    await client.execute("INSERT INTO t VALUES (1)");
    const constraint = await drizzle(client)
      .run(sql`INSERT INTO t VALUES (1)`)
      .catch((x: unknown) => x);
    client.close();
    expect(dbFailure(constraint)).toBeUndefined();
    expect(describeDbError(constraint)).toMatch(/UNIQUE constraint failed/);
    expect(dbFailure(new TypeError("cannot read properties of undefined"))).toBeUndefined();
    expect(dbFailure(new ApiError(401, "unauthorized", "unknown or revoked token"))).toBeUndefined();
    expect(dbFailure("a string")).toBeUndefined();
    expect(dbFailure(undefined)).toBeUndefined();
  });
});
