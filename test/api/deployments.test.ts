import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await t.admin("PUT", "/api/v1/models/llama-8b", {
    body: {
      spec: {
        weightsPath: "/models/llama-8b",
        profiles: [
          { name: "one-l40s", engine: "vllm", gpuClass: "l40s-45g" },
          { name: "one-h100", engine: "vllm", gpuClass: "h100-80g" },
        ],
      },
    },
  });
});
afterAll(() => t.close());

const put = (name: string, spec: unknown, headers?: Record<string, string>) =>
  t.admin("PUT", `/api/v1/deployments/${name}`, { body: { spec }, headers });

describe("PUT/GET/DELETE /api/v1/deployments/{name}", () => {
  it("creates a deployment, echoes its spec without defaults and reports it pending", async () => {
    const spec = { model: "llama-8b", replicas: 2 };
    const r = await put("chat", spec);
    expect(r.status).toBe(201);
    expect(r.json.spec).toEqual(spec);
    expect(r.json.status).toEqual({
      phase: "Pending",
      desired: 2,
      placed: 0,
      ready: 0,
      pending: [{ count: 2, reason: "waiting for placement: it runs when an agent polls" }],
    });
    expect((await t.admin("GET", "/api/v1/models/llama-8b")).json.status.deployments).toEqual(["chat"]);
  });

  it("accepts a deployment of a model that does not exist yet, pending with that reason", async () => {
    const r = await put("later", { model: "not-yet", replicas: 1, pool: "prod" });
    expect(r.status).toBe(201);
    expect(r.json.status.pending).toEqual([{ count: 1, reason: "model not-yet does not exist" }]);
  });

  it("refuses a profile the model does not have, naming it", async () => {
    const r = await put("picky", { model: "llama-8b", replicas: 1, profiles: ["one-h100", "one-b200"] });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      { path: "spec.profiles.1", message: "model llama-8b has no profile one-b200 (it has one-l40s, one-h100)" },
    ]);
    expect((await t.admin("GET", "/api/v1/deployments/picky")).status).toBe(404);
  });

  it.each([
    ["negative replicas", { model: "llama-8b", replicas: -1 }, "spec.replicas"],
    ["unknown field", { model: "llama-8b", replicas: 1, gpus: 4 }, "spec.gpus"],
    ["duplicate profiles", { model: "llama-8b", replicas: 1, profiles: ["one-l40s", "one-l40s"] }, "spec.profiles"],
    ["missing model", { replicas: 1 }, "spec.model"],
  ])("refuses %s with 400", async (_, spec, path) => {
    const r = await put("bad", spec);
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it("versions, conditions and deletes like models", async () => {
    await put("v", { model: "llama-8b", replicas: 1 });
    expect((await put("v", { replicas: 1, model: "llama-8b" })).json.metadata.version).toBe(1);
    const scaled = await put("v", { model: "llama-8b", replicas: 3 }, { "if-match": '"1"' });
    expect(scaled.json.metadata.version).toBe(2);
    expect((await put("v", { model: "llama-8b", replicas: 4 }, { "if-match": '"1"' })).status).toBe(412);
    expect((await t.admin("DELETE", "/api/v1/deployments/v")).status).toBe(204);
    expect((await t.admin("GET", "/api/v1/deployments/v")).status).toBe(404);
    expect((await t.admin("DELETE", "/api/v1/deployments/v")).status).toBe(404);
  });

  it("needs an admin token", async () => {
    expect((await t.call("GET", "/api/v1/deployments")).status).toBe(401);
    expect((await t.call("PUT", "/api/v1/deployments/x", { body: { spec: { model: "a", replicas: 1 } } })).status).toBe(
      401,
    );
  });
});
