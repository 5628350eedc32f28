import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readGeneration } from "../../api/db/cluster.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const spec = {
  weightsPath: "/models/llama-3.1-70b-instruct",
  servedName: "meta-llama/Llama-3.1-70B-Instruct",
  profiles: [
    {
      name: "tp4-h100",
      engine: "vllm",
      gpuClass: "h100-80g",
      tp: 4,
      gpusPerNode: 4,
      args: ["--max-model-len", "32768"],
    },
    { name: "nvl-2x4", engine: "sglang", gpuClass: "gb200-185g", tp: 8, gpusPerNode: 4, nodes: 2 },
  ],
};
const put = (name: string, body: unknown, headers?: Record<string, string>) =>
  t.admin("PUT", `/api/v1/models/${name}`, { body, headers });

describe("PUT/GET/DELETE /api/v1/models/{name}", () => {
  it("creates (201) and reads back the spec exactly as written, with an ETag", async () => {
    const r = await put("llama-70b", { spec });
    expect(r.status).toBe(201);
    expect(r.headers.get("etag")).toBe('"1"');
    expect(r.json).toMatchObject({
      name: "llama-70b",
      spec,
      status: { deployments: [] },
      metadata: { version: 1, etag: '"1"' },
    });
    const g = await t.admin("GET", "/api/v1/models/llama-70b");
    expect(g.status).toBe(200);
    expect(g.headers.get("etag")).toBe('"1"');
    expect(JSON.stringify(g.json.spec)).toBe(JSON.stringify(spec));
    expect((await t.admin("GET", "/api/v1/models")).json.items.map((m: { name: string }) => m.name)).toContain(
      "llama-70b",
    );
  });

  it("keeps the version on a PUT that changes nothing (even in another key order) and bumps it on a change", async () => {
    await put("same", { spec });
    const gen = await readGeneration(t.db);
    const reordered = { profiles: spec.profiles, servedName: spec.servedName, weightsPath: spec.weightsPath };
    const again = await put("same", {
      name: "same",
      spec: reordered,
      status: { deployments: ["x"] },
      metadata: { version: 99 },
    });
    expect(again.status).toBe(200);
    expect(again.json.metadata.version).toBe(1);
    expect(JSON.stringify(again.json.spec)).toBe(JSON.stringify(spec));
    expect(await readGeneration(t.db)).toBe(gen);
    const changed = await put("same", { spec: { ...spec, weightsPath: "/models/other" } });
    expect(changed.json.metadata).toMatchObject({ version: 2, etag: '"2"' });
    expect(await readGeneration(t.db)).toBe(gen + 1);
  });

  it("honours If-Match on PUT and DELETE (412 when stale or missing)", async () => {
    await put("cond", { spec });
    const stale = await put("cond", { spec: { ...spec, weightsPath: "/x" } }, { "if-match": '"7"' });
    expect(stale.status).toBe(412);
    expect(stale.json.code).toBe("precondition_failed");
    expect((await t.admin("GET", "/api/v1/models/cond")).json.spec.weightsPath).toBe(spec.weightsPath);
    expect((await put("cond", { spec: { ...spec, weightsPath: "/x" } }, { "if-match": '"1"' })).status).toBe(200);
    expect((await put("nope", { spec }, { "if-match": "*" })).status).toBe(412);
    // If-None-Match: * creates only: a second create of the same name cannot take the existing one over
    const taken = await put("cond", { spec }, { "if-none-match": "*" });
    expect(taken.status).toBe(412);
    expect(taken.json.detail).toContain("model cond already exists");
    expect((await put("fresh", { spec }, { "if-none-match": "*" })).status).toBe(201);
    expect((await t.admin("DELETE", "/api/v1/models/cond", { headers: { "if-match": '"1"' } })).status).toBe(412);
    expect((await t.admin("DELETE", "/api/v1/models/cond", { headers: { "if-match": '"2"' } })).status).toBe(204);
    expect((await t.admin("GET", "/api/v1/models/cond")).status).toBe(404);
    expect((await t.admin("DELETE", "/api/v1/models/cond")).status).toBe(404);
  });

  it.each([
    [
      "tp × pp mismatch",
      { profiles: [{ name: "a", engine: "vllm", gpuClass: "h100-80g", tp: 4, gpusPerNode: 2 }] },
      "spec.profiles.0.gpusPerNode",
      "gpusPerNode × nodes (2 × 1) must equal tp × pp (4 × 1)",
    ],
    [
      "MIG with tp 2",
      { profiles: [{ name: "a", engine: "vllm", gpuClass: "a100-80g-mig-3g.40gb", tp: 2, gpusPerNode: 2 }] },
      "spec.profiles.0.gpuClass",
      "a MIG class needs tp = pp = gpusPerNode = nodes = 1",
    ],
    [
      "unknown engine",
      { profiles: [{ name: "a", engine: "ollama", gpuClass: "h100-80g" }] },
      "spec.profiles.0.engine",
      "",
    ],
    [
      "duplicate profile names",
      {
        profiles: [
          { name: "a", engine: "vllm", gpuClass: "h100-80g" },
          { name: "a", engine: "vllm", gpuClass: "l40s-45g" },
        ],
      },
      "spec.profiles.1.name",
      "used twice",
    ],
    [
      "unknown field",
      { colour: "blue", profiles: [{ name: "a", engine: "vllm", gpuClass: "h100-80g" }] },
      "spec.colour",
      "unknown field",
    ],
    ["no profiles", { profiles: [] }, "spec.profiles", ""],
    [
      "an engine-owned flag in args (--port=… too)",
      {
        profiles: [
          { name: "a", engine: "vllm", gpuClass: "h100-80g", args: ["--max-model-len", "8192", "--port=9000"] },
        ],
      },
      "spec.profiles.0.args.2",
      "--port is set by llmgw for vllm (to the port placement gave the shard): remove it from args",
    ],
    [
      "a tensor-parallel size in args",
      { profiles: [{ name: "a", engine: "sglang", gpuClass: "h100-80g", args: ["--tp", "8"] }] },
      "spec.profiles.0.args.0",
      "--tp is set by llmgw for sglang (to the profile's tp)",
    ],
    [
      "llama.cpp's model alias in args",
      { profiles: [{ name: "a", engine: "llamacpp", gpuClass: "l40s-45g", args: ["-a", "other"] }] },
      "spec.profiles.0.args.0",
      "-a is set by llmgw for llamacpp (to the model's servedName)",
    ],
  ])("refuses %s with 400 naming the field, writing nothing", async (_, partial, path, message) => {
    const r = await put("bad", { spec: { weightsPath: "/m", ...partial } });
    expect(r.status).toBe(400);
    const field = r.json.errors.find((e: { path: string }) => e.path === path);
    expect(field, JSON.stringify(r.json.errors)).toBeDefined();
    expect(field.message).toContain(message);
    expect((await t.admin("GET", "/api/v1/models/bad")).status).toBe(404);
  });

  it("refuses a body naming another model, and a name that is not a resource name", async () => {
    const r = await put("m1", { name: "m2", spec });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([{ path: "name", message: "must equal m1" }]);
    expect((await put("Bad_Name!", { spec })).status).toBe(400);
  });
});
