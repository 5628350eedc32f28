import { describe, expect, it } from "vitest";
import { outcomeOf, parseApplyFile, refOf } from "../../../agent/ctl/apply-file.js";
import { UsageError } from "../../../agent/ctl/errors.js";

const MODEL = {
  kind: "Model",
  name: "llama-8b",
  spec: { weightsPath: "/models/llama-3.1-8b", profiles: [{ name: "one-h100", engine: "vllm", gpuClass: "h100-80g" }] },
};
const DEPLOYMENT = { kind: "Deployment", name: "chat", spec: { model: "llama-8b", replicas: 2, pool: "prod" } };
const KEY = { kind: "ApiKey", name: "team-search", spec: { models: ["llama-8b"], requestsPerMinute: 600 } };

/** The UsageError message parseApplyFile throws for `text`. */
function usage(text: string, source = "fleet.yaml"): string {
  try {
    parseApplyFile(text, source);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error("parsed");
}

describe("parseApplyFile", () => {
  it.each([
    ["one JSON object", JSON.stringify(MODEL), [MODEL]],
    ["a JSON list", JSON.stringify([MODEL, DEPLOYMENT, KEY]), [MODEL, DEPLOYMENT, KEY]],
    [
      "YAML documents, one of them a list, an empty one skipped",
      `kind: Model
name: llama-8b
spec:
  weightsPath: /models/llama-3.1-8b
  profiles:
    - {name: one-h100, engine: vllm, gpuClass: h100-80g}
---
# nothing here
---
- kind: Deployment
  name: chat
  spec: {model: llama-8b, replicas: 2, pool: prod}
- kind: ApiKey
  name: team-search
  spec:
    models: [llama-8b]
    requestsPerMinute: 600
`,
      [MODEL, DEPLOYMENT, KEY],
    ],
  ])("reads %s, in order", (_, text, want) => {
    expect(parseApplyFile(text, "f")).toEqual(want);
  });

  it("keeps the spec exactly as written, unknown fields included: the API judges it", () => {
    const odd = { kind: "Model", name: "m", spec: { colour: "blue", profiles: "not a list" } };
    expect(parseApplyFile(JSON.stringify(odd), "f")).toEqual([odd]);
  });

  it.each([
    ["", "fleet.yaml: no objects to apply"],
    ["---\n---\n", "fleet.yaml: no objects to apply"],
    ["kind: [Model\nname: x", "fleet.yaml: not YAML or JSON: "],
    ['{"kind": "Model", "name": "m", "spec": {}', "fleet.yaml: not YAML or JSON: "],
    [
      "kind: Modle\nname: m\nspec: {}\n",
      'fleet.yaml: kind: Invalid option: expected one of "Model"|"Deployment"|"ApiKey"',
    ],
    ["kind: Model\nname: Llama 8B\nspec: {}\n", "fleet.yaml: name: 1-63 lower-case letters"],
    ["kind: Model\nname: m\n", "fleet.yaml: spec: Invalid input: expected record, received undefined"],
    ["kind: Model\nname: m\nspec: [1]\n", "fleet.yaml: spec: "],
    [
      "kind: Model\nname: m\nspec: {}\nmetadata: {}\n",
      "fleet.yaml: metadata: unknown field (an object is {kind, name, spec})",
    ],
    ["just a string", "fleet.yaml: (object): "],
    [
      "kind: Model\nname: m\nspec: {}\n---\n- kind: Deployment\n  name: d\n  spec: {}\n- 7\n",
      "fleet.yaml, document 2, item 2: (object): ",
    ],
    [
      "- kind: Model\n  name: m\n  spec: {}\n- kind: Model\n  name: m\n  spec: {a: 1}\n",
      "fleet.yaml: model/m appears twice",
    ],
  ])("refuses %j, saying where", (text, want) => {
    expect(usage(text)).toContain(want);
  });

  it("names stdin as its source", () => {
    expect(usage("kind: x", "stdin")).toMatch(/^stdin: /);
  });
});

describe("refOf", () => {
  it.each([
    ["Model", "llama-8b", "model/llama-8b"],
    ["Deployment", "chat", "deployment/chat"],
    ["ApiKey", "team-search", "apikey/team-search"],
  ] as const)("%s %s -> %s", (kind, name, want) => expect(refOf({ kind, name })).toBe(want));
});

describe("outcomeOf", () => {
  it.each([
    [201, undefined, 1, "created"],
    [201, 3, 1, "created"],
    [200, 1, 1, "unchanged"],
    [200, 1, 2, "updated"],
    [200, undefined, 1, "updated"],
  ] as const)("HTTP %i, version %s -> %i: %s", (status, before, after, want) =>
    expect(outcomeOf(status, before, after)).toBe(want),
  );
});
