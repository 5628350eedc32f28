import { errors } from "undici";
import { describe, expect, it } from "vitest";
import { type FailureKind, failureKind, retriable } from "../../api/router/failures.js";

/** A Node system error as net/undici throw it (`connect ECONNREFUSED 127.0.0.1:1`). */
const sysError = (code: string) =>
  Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code, syscall: "connect" });

describe("failureKind", () => {
  it.each<[string, unknown, FailureKind]>([
    ["ECONNREFUSED on the error", sysError("ECONNREFUSED"), "refused"],
    [
      "ECONNREFUSED as the cause (fetch failed)",
      new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } }),
      "refused",
    ],
    ["ECONNREFUSED as an Error cause", new Error("x", { cause: sysError("ECONNREFUSED") }), "refused"],
    ["ECONNRESET", sysError("ECONNRESET"), "reset"],
    ["EPIPE", sysError("EPIPE"), "reset"],
    ["ECONNRESET as the cause", new Error("x", { cause: { code: "ECONNRESET" } }), "reset"],
    ["undici SocketError", new errors.SocketError("other side closed"), "reset"],
    ["undici ConnectTimeoutError", new errors.ConnectTimeoutError(), "connect_timeout"],
    ["undici HeadersTimeoutError", new errors.HeadersTimeoutError(), "first_byte_timeout"],
    ["undici BodyTimeoutError", new errors.BodyTimeoutError(), "idle_timeout"],
    ["undici RequestAbortedError", new errors.RequestAbortedError(), "aborted"],
    [
      "a DOMException AbortError (signal aborted)",
      new DOMException("This operation was aborted", "AbortError"),
      "aborted",
    ],
    [
      "the error's own code wins over its cause's",
      Object.assign(new Error("x", { cause: { code: "ECONNREFUSED" } }), { code: "UND_ERR_HEADERS_TIMEOUT" }),
      "first_byte_timeout",
    ],
    ["ENOTFOUND", sysError("ENOTFOUND"), "other"],
    ["undici ResponseExceededMaxSizeError", new errors.ResponseExceededMaxSizeError(), "other"],
    ["a plain Error", new Error("boom"), "other"],
    ["a TimeoutError DOMException", new DOMException("timed out", "TimeoutError"), "other"],
    ["a string", "ECONNREFUSED", "other"],
    ["undefined", undefined, "other"],
    ["null", null, "other"],
    ["an object with a code", { code: "ECONNRESET" }, "reset"],
  ])("%s → %s", (_, e, kind) => {
    expect(failureKind(e)).toBe(kind);
  });
});

describe("retriable", () => {
  it.each<[FailureKind, boolean]>([
    ["refused", true],
    ["reset", true],
    ["connect_timeout", true],
    ["first_byte_timeout", false],
    ["idle_timeout", false],
    ["aborted", false],
    ["other", false],
  ])("%s → %s", (kind, want) => {
    expect(retriable(kind)).toBe(want);
  });

  it("does not retry a reset once the whole request was written; refused and connect timeouts stay retriable", () => {
    expect(retriable("reset", true)).toBe(false);
    expect(retriable("refused", true)).toBe(true);
    expect(retriable("connect_timeout", true)).toBe(true);
  });
});
