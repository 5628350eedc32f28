import { describe, expect, it } from "vitest";
import { compareVersions, leaderPorts, migVersionRefusal } from "../../shared/engines.js";

describe("compareVersions", () => {
  it.each([
    ["1.3.0rc14", "1.3.0rc15", -1],
    ["1.3.0rc15", "1.3.0", -1],
    ["1.3.0", "1.3.0rc15", 1],
    ["1.3.0.dev20260301", "1.3.0rc1", -1],
    ["1.3.0b2", "1.3.0rc1", -1],
    ["0.23.1.dev7+g1a2b", "0.24.0", -1],
    ["0.24", "0.24.0", 0],
    ["v0.29.0", "0.24.0", 1],
    ["1.10.0", "1.9.0", 1],
  ])("%s vs %s", (a, b, sign) => expect(Math.sign(compareVersions(a, b)!)).toBe(sign));

  it("cannot order a version that is not numbered", () => {
    expect(compareVersions("b4589", "1.0")).toBeUndefined();
    expect(compareVersions("unknown", "1.0")).toBeUndefined();
  });

  it("keeps a pre-release of vLLM 0.24.0 off MIG: the fix is known only in the release", () =>
    expect(migVersionRefusal("vllm", "0.24.0rc1")).toContain("before 0.24.0"));
});

describe("leaderPorts", () => {
  it("takes ports for SGLang's DP attention only", () => {
    expect(leaderPorts("sglang", ["--enable-dp-attention"])?.offsets).toEqual([1, 2, 3, 4, 5, 6, 13]);
    expect(leaderPorts("sglang", ["--dp-size", "2"])).toBeUndefined();
    expect(leaderPorts("vllm", ["--enable-dp-attention"])).toBeUndefined();
  });
});
