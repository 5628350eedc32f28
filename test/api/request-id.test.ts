import { describe, expect, it } from "vitest";
import { requestIdOf } from "../../api/request-id.js";

describe("requestIdOf", () => {
  it("keeps a sane x-request-id from the client", () => {
    expect(requestIdOf("trace-123.a_b")).toBe("trace-123.a_b");
  });

  it.each([undefined, "", "has space", "x".repeat(129), "é", ["a", "b"]])(
    "makes a new id instead of %j",
    (incoming) => {
      expect(requestIdOf(incoming as string | string[] | undefined)).toMatch(/^req_[A-Za-z0-9]{10}[0-9a-z]+$/);
    },
  );

  it("never gives the same id twice", () => {
    const ids = Array.from({ length: 10_000 }, () => requestIdOf(undefined));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
