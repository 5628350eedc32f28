import { describe, expect, it } from "vitest";
import { commaList, DEFAULT_SERVER, durationS, kindOf, positiveInt, resolveTarget } from "../../../agent/ctl/args.js";
import { UsageError } from "../../../agent/ctl/errors.js";

describe("kindOf", () => {
  it.each([
    ["model", "models"],
    ["Models", "models"],
    ["deploy", "deployments"],
    ["replica", "replicas"],
    ["node", "nodes"],
    ["keys", "api-keys"],
    ["api-key", "api-keys"],
    ["apikeys", "api-keys"],
    ["token", "tokens"],
    ["admin-tokens", "tokens"],
    ["join-token", "join-tokens"],
  ])("%s -> %s", (word, kind) => expect(kindOf(word)).toBe(kind));

  it("lists the kinds when it does not know one", () => {
    expect(() => kindOf("gadgets")).toThrow(
      new UsageError(
        "unknown kind gadgets: one of models, deployments, replicas, nodes, api-keys, tokens, join-tokens",
      ),
    );
  });
});

describe("positiveInt", () => {
  it.each([
    ["1", 1],
    ["600", 600],
    [" 42 ", 42],
  ])("%j -> %i", (v, n) => expect(positiveInt(v, "--rpm")).toBe(n));
  it.each(["0", "-1", "1.5", "ten", "", "1e3", "99999999999999999999"])("refuses %j", (v) => {
    expect(() => positiveInt(v, "--rpm")).toThrow(UsageError);
    expect(() => positiveInt(v, "--rpm")).toThrow(/^--rpm: expected a whole number of 1 or more/);
  });
});

describe("durationS", () => {
  it.each([
    ["3600", 3600],
    ["90s", 90],
    ["15m", 900],
    ["24h", 86400],
    ["7d", 604800],
    [" 2 h", 7200],
  ])("%j -> %i s", (v, s) => expect(durationS(v, "--expires-in")).toBe(s));
  it.each(["0", "0h", "1w", "-5m", "1.5h", "h", ""])("refuses %j", (v) =>
    expect(() => durationS(v, "--expires-in")).toThrow(/^--expires-in: expected a duration/),
  );
});

describe("commaList", () => {
  it.each([
    ["a,b", ["a", "b"]],
    [" a , b ,", ["a", "b"]],
    ["", []],
    ["meta-llama/Llama-3.1-8B-Instruct", ["meta-llama/Llama-3.1-8B-Instruct"]],
  ])("%j -> %j", (v, want) => expect(commaList(v)).toEqual(want));
});

describe("resolveTarget", () => {
  it("takes flags over the environment, and the default server", () => {
    expect(
      resolveTarget({ server: "http://a:1", token: "t1" }, { LLMGW_SERVER: "http://b:2", LLMGW_TOKEN: "t2" }),
    ).toEqual({ server: "http://a:1", token: "t1" });
    expect(resolveTarget({}, { LLMGW_SERVER: "https://b:2", LLMGW_TOKEN: "t2" })).toEqual({
      server: "https://b:2",
      token: "t2",
    });
    expect(resolveTarget({}, { LLMGW_TOKEN: "t2" })).toEqual({ server: DEFAULT_SERVER, token: "t2" });
  });

  it.each([
    [{ token: "t", server: "not a url" }, /not a URL/],
    [{ token: "t", server: "ftp://x" }, /expected an http:\/\/ or https:\/\/ URL/],
    [{}, /no admin token: pass --token or set LLMGW_TOKEN/],
  ])("refuses %j", (flags, want) => {
    expect(() => resolveTarget(flags, {})).toThrow(UsageError);
    expect(() => resolveTarget(flags, {})).toThrow(want);
  });
});
