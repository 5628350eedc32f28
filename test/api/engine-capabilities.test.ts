// What each engine can run on (shared/engines.ts), as the API and placement hold it: a model whose profile its engine
// cannot run is refused when written; one stored before the rule is never placed and says why; llama.cpp's Vulkan build
// is never offered a MIG instance.
import { afterEach, describe, expect, it } from "vitest";
import { models } from "../../api/db/schema.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { migInventory, registerBody } from "../helpers/inventory.js";

let t: TestApp;
afterEach(() => t?.close());

const profile = (engine: string, more: object = {}) => ({ name: "p", engine, gpuClass: "h100-80g", ...more });

describe("a profile its engine cannot run", () => {
  it.each(["llamacpp", "trtllm"])(
    "%s across two nodes is refused with the field named, and nothing is written",
    async (engine) => {
      t = await createTestApp();
      const r = await t.admin("PUT", "/api/v1/models/m", {
        body: { spec: { weightsPath: "/m", profiles: [profile(engine, { tp: 8, gpusPerNode: 4, nodes: 2 })] } },
      });
      expect(r.status).toBe(400);
      expect(r.headers.get("content-type")).toMatch(/problem\+json/);
      expect(r.json.errors).toContainEqual({
        path: "spec.profiles.0.nodes",
        message: expect.stringContaining(`engine ${engine} runs a replica on one node only`),
      });
      expect((await t.admin("GET", "/api/v1/models/m")).status).toBe(404);
    },
  );

  it("vllm and sglang may span nodes", async () => {
    t = await createTestApp();
    for (const engine of ["vllm", "sglang"]) {
      const spec = { weightsPath: "/m", profiles: [profile(engine, { tp: 8, gpusPerNode: 4, nodes: 2 })] };
      expect((await t.admin("PUT", `/api/v1/models/${engine}`, { body: { spec } })).status).toBe(201);
    }
  });

  it("stored before the rule (an older version wrote it) is never placed, and its deployment says why", async () => {
    t = await createTestApp();
    const spec = { weightsPath: "/m", profiles: [profile("llamacpp", { tp: 2, gpusPerNode: 1, nodes: 2 })] };
    await t.store.write((tx) =>
      tx.insert(models).values({ name: "old", spec: JSON.stringify(spec), version: 1, createdAt: 0, updatedAt: 0 }),
    );
    await t.admin("PUT", "/api/v1/deployments/old", { body: { spec: { model: "old", replicas: 1 } } });
    await t.settle();
    const d = (await t.admin("GET", "/api/v1/deployments/old")).json;
    expect(d.status.placed).toBe(0);
    expect(d.status.pending[0].reason).toContain("engine llamacpp runs a replica on one node only");
  });
});

describe("llama.cpp's Vulkan build and MIG", () => {
  const register = async (backends?: Record<string, "cuda" | "vulkan">) => {
    const inventory = migInventory("mig1");
    inventory.engines = { probed: ["llamacpp"], versions: { llamacpp: "b6123" }, ...(backends ? { backends } : {}) };
    const r = await t.call("POST", "/api/v1/agents/register", {
      token: t.adminToken,
      body: registerBody("mig1", inventory),
    });
    expect(r.status).toBe(201);
  };
  const deploy = async () => {
    const mig = { name: "mig", engine: "llamacpp", gpuClass: "a100-80g-mig-1g.20gb" };
    await t.admin("PUT", "/api/v1/models/small", { body: { spec: { weightsPath: "/m", profiles: [mig] } } });
    await t.admin("PUT", "/api/v1/deployments/small", {
      body: { spec: { model: "small", replicas: 1, pool: "prod" } },
    });
    await t.settle();
    return (await t.admin("GET", "/api/v1/deployments/small")).json.status;
  };

  it("is never offered a MIG instance, and the deployment says why", async () => {
    t = await createTestApp();
    await register({ llamacpp: "vulkan" });
    const status = await deploy();
    expect(status.placed).toBe(0);
    expect(status.pending[0].reason).toContain("its build on mig1 is Vulkan's, which cannot address MIG instances");
  });

  it("the CUDA build is placed on one", async () => {
    t = await createTestApp();
    await register();
    expect((await deploy()).placed).toBe(1);
  });
});
