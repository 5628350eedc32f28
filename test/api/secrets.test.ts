import { describe, expect, it, vi } from "vitest";
import "../../api/node.js";
import { hashSecret } from "../../api/db/secrets.js";

describe("hashSecret", () => {
  it("is hex SHA-256 (the value stored tokens are looked up by)", async () => {
    expect(await hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("on Node hashes without Web Crypto's digest, to the same value", async () => {
    const token = "llmgw_node_0123456789abcdefghijABCDEFGHIJ0123456789";
    const web = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
    const expected = [...web].map((b) => b.toString(16).padStart(2, "0")).join("");
    const digest = vi.spyOn(crypto.subtle, "digest");
    try {
      expect(await hashSecret(token)).toBe(expected);
      expect(digest).not.toHaveBeenCalled();
    } finally {
      digest.mockRestore();
    }
  });
});
