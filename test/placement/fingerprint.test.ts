// The profile fingerprint: stable, and changed by exactly what changes an engine's command line.
import { describe, expect, it } from "vitest";
import { profileFingerprint } from "../../api/placement/fingerprint.js";
import { canonicalJson } from "../../shared/canonical-json.js";
import { fnv1a64 } from "../../shared/hash.js";
import { model, profile } from "./builders.js";

describe("profileFingerprint", () => {
  const p = profile("tp4", "h100-80g", 4, 1, { args: ["--max-model-len", "8192"], env: { A: "1", B: "2" } });
  const m = model("l70", [p]);
  const fp = profileFingerprint(m, p);

  it("is FNV-1a 64 over canonical JSON, as 16 hex digits", () => {
    expect(fnv1a64("")).toBe("cbf29ce484222325");
    expect(fnv1a64("a")).toBe("af63dc4c8601ec8c");
    expect(canonicalJson({ b: [2, { d: 1, c: undefined, a: null }], a: "x" })).toBe(
      '{"a":"x","b":[2,{"a":null,"d":1}]}',
    );
    expect(fp).toMatch(/^[0-9a-f]{16}$/);
  });

  it("does not depend on key order or on what does not reach the command line", () => {
    const same = { ...p, env: { B: "2", A: "1" }, name: "renamed", startupTimeoutS: 1 };
    expect(profileFingerprint({ ...m, name: "other", profiles: [] }, same)).toBe(fp);
  });

  it.each([
    ["engine", { engine: "sglang" }],
    ["tp", { tp: 8 }],
    ["pp", { pp: 2 }],
    ["gpusPerNode", { gpusPerNode: 2 }],
    ["nodes", { nodes: 2 }],
    ["args", { args: ["--max-model-len", "4096"] }],
    ["env", { env: { A: "1", B: "3" } }],
    ["gpuClass", { gpuClass: "h200-141g" }],
  ])("changes with the profile's %s", (_, change) => {
    expect(profileFingerprint(m, { ...p, ...change })).not.toBe(fp);
  });

  it.each([
    ["weightsPath", { weightsPath: "/other" }],
    ["servedName", { servedName: "other" }],
  ])("changes with the model's %s", (_, change) => {
    expect(profileFingerprint({ ...m, ...change }, p)).not.toBe(fp);
  });
});
