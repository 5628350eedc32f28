import { describe, expect, it } from "vitest";
import { ApiCallError } from "../../../agent/client.js";
import { CtlError, EXIT, errorLines, exitCodeOf, UsageError } from "../../../agent/ctl/errors.js";
import type { Problem } from "../../../shared/schemas/problem.js";

const problem = (status: number, code: Problem["code"], detail: string, errors?: Problem["errors"]): Problem => ({
  type: `urn:llmgw:problem:${code}`,
  title: "t",
  status,
  detail,
  code,
  requestId: "req_1",
  ...(errors ? { errors } : {}),
});

describe("exitCodeOf", () => {
  it.each([
    ["a usage error", new UsageError("bad flag"), EXIT.usage],
    ["an unreachable server", new CtlError(0, "cannot reach", undefined, true), EXIT.unreachable],
    ["a 404", new CtlError(404, "no model x", problem(404, "not_found", "no model x")), EXIT.notFound],
    ["a 404 without a problem body", new CtlError(404, "HTTP 404"), EXIT.notFound],
    ["a 400", new CtlError(400, "bad", problem(400, "validation_failed", "bad")), EXIT.api],
    ["a 401", new CtlError(401, "unknown token", problem(401, "unauthorized", "unknown token")), EXIT.api],
    ["a 412", new CtlError(412, "exists", problem(412, "precondition_failed", "exists")), EXIT.api],
    ["an answer that made no sense", new CtlError(200, "unexpected answer"), EXIT.api],
    ["the agent client's error", new ApiCallError(404, "x"), EXIT.notFound],
    ["anything else", new Error("boom"), EXIT.api],
  ])("%s -> %i", (_, e, code) => expect(exitCodeOf(e)).toBe(code));
});

describe("errorLines", () => {
  it("prints the problem's detail", () => {
    expect(errorLines(new CtlError(404, "no model x", problem(404, "not_found", "no model x")))).toEqual([
      "no model x",
    ]);
  });

  it("lists every invalid field by its path when there are several", () => {
    const p = problem(400, "validation_failed", "spec.colour: unknown field; spec.replicas: Too small", [
      { path: "spec.colour", message: "unknown field" },
      { path: "spec.replicas", message: "Too small" },
    ]);
    expect(errorLines(new CtlError(400, p.detail, p), "deployment/chat")).toEqual([
      "deployment/chat: spec.colour: unknown field; spec.replicas: Too small",
      "  spec.colour: unknown field",
      "  spec.replicas: Too small",
    ]);
  });

  it("keeps one invalid field on the detail's line", () => {
    const p = problem(400, "validation_failed", "spec.replicas: Too small", [
      { path: "spec.replicas", message: "Too small" },
    ]);
    expect(errorLines(new CtlError(400, p.detail, p))).toEqual(["spec.replicas: Too small"]);
  });

  it("prints other errors' messages", () => {
    expect(errorLines(new UsageError("fleet.yaml: kind: bad"))).toEqual(["fleet.yaml: kind: bad"]);
    expect(errorLines("a string", "x")).toEqual(["x: a string"]);
  });
});
