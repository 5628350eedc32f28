// An error crossing between serve's threads keeps what the API tells failures apart by: a database failure found in
// its causes (a full disk, a busy file, a refused queue) is the same failure on the other side, not an internal error.
import { describe, expect, it } from "vitest";
import { dbFailure } from "../../api/db/db-errors.js";
import { MAX_WAITING, queueFull } from "../../api/db/write-limits.js";
import { fromThreadError, toThreadError } from "../../api/fleet-thread/thread-error.js";

/** `e` as the other thread receives it: posted (structured clone), then made an Error again. */
const across = (e: unknown) => fromThreadError(structuredClone(toThreadError(e)));

describe("an error posted to the other thread", () => {
  it("keeps a database failure in its causes, with its message", () => {
    const sqlite = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    const e = new Error("Failed query: insert into events …", { cause: sqlite });
    const there = across(e);
    expect(there.message).toBe(e.message);
    expect(dbFailure(there)).toEqual(dbFailure(e));
    expect(dbFailure(there)?.kind).toBe("full");
  });

  it("keeps a write refused for the instance's full queue a busy database", () => {
    expect(dbFailure(across(queueFull(MAX_WAITING)))).toEqual(dbFailure(queueFull(MAX_WAITING)));
    expect(dbFailure(across(queueFull(MAX_WAITING)))?.status).toBe(503);
  });

  it("keeps a server's HTTP status, and makes anything thrown a message", () => {
    const http = Object.assign(new Error("Server returned HTTP status 401"), { name: "HttpServerError", status: 401 });
    expect(dbFailure(across(http))?.kind).toBe("auth");
    expect(across("a plain string").message).toBe("a plain string");
    expect(dbFailure(across(new Error("no code")))).toBeUndefined();
  });
});
