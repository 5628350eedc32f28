import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalAddresses, imexConfigDigest } from "../../shared/imex-config.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("imexConfigDigest", () => {
  it("is the hex SHA-256 of the sorted addresses joined by newlines", async () => {
    expect(await imexConfigDigest(["10.0.0.2", "10.0.0.1"])).toBe(sha256("10.0.0.1\n10.0.0.2"));
    expect(await imexConfigDigest([])).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("gives the same digest for the same set in any order, with repeats, and another for another set", async () => {
    const a = await imexConfigDigest(["10.0.0.1", "gb-tray-b.lab", "10.0.0.3"]);
    expect(await imexConfigDigest(["10.0.0.3", "10.0.0.1", "gb-tray-b.lab"])).toBe(a);
    expect(await imexConfigDigest(["gb-tray-b.lab", "10.0.0.3", "10.0.0.1", "10.0.0.3"])).toBe(a);
    expect(await imexConfigDigest(["10.0.0.1", "10.0.0.3"])).not.toBe(a);
  });

  it("sorts by code units, whatever the locale (so both sides agree)", () => {
    expect(canonicalAddresses(["b", "B", "10.0.0.10", "10.0.0.9", "a"])).toEqual([
      "10.0.0.10",
      "10.0.0.9",
      "B",
      "a",
      "b",
    ]);
  });
});
