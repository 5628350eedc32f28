import { expect, it } from "vitest";
import { causesOf, problemOf } from "../../api/errors.js";

type Line = { level: string; msg: string; fields?: Record<string, unknown> };
const logTo = (lines: Line[]) => ({
  info: (msg: string, fields?: Record<string, unknown>) => lines.push({ level: "info", msg, fields }),
  warn: (msg: string, fields?: Record<string, unknown>) => lines.push({ level: "warn", msg, fields }),
  error: (msg: string, fields?: Record<string, unknown>) => lines.push({ level: "error", msg, fields }),
});

it("logs an unexpected error with its causes: what a library's own message leaves out", () => {
  // the shape drizzle throws: what failed on top, why underneath
  const why = Object.assign(new Error("SQLITE_MISMATCH: datatype mismatch"), { code: "SQLITE_MISMATCH" });
  const err = new Error("Failed query: savepoint sp0\nparams: ", { cause: why });
  const lines: Line[] = [];
  const p = problemOf(err, "req_1", logTo(lines));
  expect(p).toMatchObject({ status: 500, code: "internal" });
  expect(lines).toEqual([
    {
      level: "error",
      msg: "unhandled error",
      fields: expect.objectContaining({ requestId: "req_1", causes: ["SQLITE_MISMATCH: datatype mismatch"] }),
    },
  ]);
});

it("lists a chain of causes outermost first, naming a code its message does not", () => {
  const inner = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
  const mid = new Error("fetch failed", { cause: inner });
  expect(causesOf(new Error("top", { cause: mid }))).toEqual(["fetch failed", "ECONNRESET: socket hang up"]);
  expect(causesOf(new Error("alone"))).toEqual([]);
  expect(causesOf(new Error("odd", { cause: "a string" }))).toEqual(["a string"]);
  // a cycle ends: a cause met again is not listed again
  const a = new Error("a") as Error & { cause?: unknown };
  const b = new Error("b", { cause: a });
  a.cause = b;
  expect(causesOf(a)).toEqual(["b"]);
});
