// Bad input a red-team pass found: ids an inventory or heartbeat uses twice, lists and maps past their bounds, an API
// key on the control API, and a trailing slash. Each is refused with problem+json naming what is wrong; nothing is
// written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newSecret } from "../../api/db/secrets.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function joinToken() {
  const r = await t.admin("POST", "/api/v1/join-tokens", { body: {} });
  return { token: r.json.token as string, id: r.json.id as string };
}
const uses = async (id: string) =>
  (await t.admin("GET", "/api/v1/join-tokens")).json.items.find((j: { id: string }) => j.id === id).uses as number;
const register = (token: string, body: object) => t.call("POST", "/api/v1/agents/register", { token, body });

/** A MIG card: gpu 0 of the HGX capture with two 3g instances. */
function migCard(inv: Inventory, instances: Partial<Inventory["gpus"][number]["mig"] & object>["instances"]) {
  const [g0, ...rest] = inv.gpus;
  return { ...inv, gpus: [{ ...g0!, mig: { current: "Enabled", instances: instances! } }, ...rest] };
}
const instance = (index: number, uuid: string) => ({ index, uuid, profile: "3g.40gb", processes: [] });

const duplicates: [string, (inv: Inventory) => Inventory, string, RegExp][] = [
  [
    "a GPU index",
    (inv) => ({ ...inv, gpus: inv.gpus.map((g, i) => (i === 1 ? { ...g, index: 0 } : g)) }),
    "inventory.gpus.1.index",
    /^GPU index 0 is used twice: gpus\.0\.index has it too$/,
  ],
  [
    "a GPU UUID",
    (inv) => ({ ...inv, gpus: inv.gpus.map((g, i) => (i === 2 ? { ...g, uuid: inv.gpus[0]!.uuid } : g)) }),
    "inventory.gpus.2.uuid",
    /^GPU UUID .* is used twice/,
  ],
  [
    "a MIG instance index on one card",
    (inv) => migCard(inv, [instance(1, "MIG-a"), instance(1, "MIG-b")]),
    "inventory.gpus.0.mig.instances.1.index",
    /^MIG instance index 1 is used twice/,
  ],
  [
    "a MIG instance UUID",
    (inv) => migCard(inv, [instance(1, "MIG-a"), instance(2, "MIG-a")]),
    "inventory.gpus.0.mig.instances.1.uuid",
    /^MIG instance UUID MIG-a is used twice/,
  ],
  [
    "an HCA name",
    (inv) => ({ ...inv, hcas: [inv.hcas[0]!, inv.hcas[0]!] }),
    "inventory.hcas.1.name",
    /^HCA mlx5_0 is used twice/,
  ],
];

describe("ids used twice in a registration", () => {
  it.each(duplicates)("refuses %s with 400 naming the field, writing nothing", async (_, change, path, message) => {
    const nodeId = `dup-${path.replace(/\W+/g, "-")}`;
    const join = await joinToken();
    const r = await register(join.token, registerBody(nodeId, change(nodeInventory(nodeId))));
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.json.code).toBe("validation_failed");
    expect(r.json.errors).toEqual([{ path, message: expect.stringMatching(message) }]);
    expect((await t.admin("GET", `/api/v1/nodes/${nodeId}`)).status).toBe(404);
    expect(await uses(join.id)).toBe(0);
  });

  it("refuses a known node re-registering so with its own token, keeping what it had", async () => {
    const join = await joinToken();
    const first = await register(join.token, registerBody("dup-again", nodeInventory("dup-again")));
    expect(first.status).toBe(201);
    const before = (await t.admin("GET", "/api/v1/nodes/dup-again")).json;
    const r = await register(first.json.nodeToken, registerBody("dup-again", duplicates[0]![1](nodeInventory("x"))));
    expect(r.status).toBe(400);
    expect(r.json.errors[0].path).toBe("inventory.gpus.1.index");
    const after = (await t.admin("GET", "/api/v1/nodes/dup-again")).json;
    expect(after.inventory).toEqual(before.inventory);
    expect(after.devices).toHaveLength(8);
  });
});

describe("ids used twice in a heartbeat", () => {
  it("refuses a GPU or a port named twice, changing nothing", async () => {
    const join = await joinToken();
    const inv = nodeInventory("hb-dup");
    const reg = await register(join.token, registerBody("hb-dup", inv));
    const token = reg.json.nodeToken as string;
    const uuid = inv.gpus[0]!.uuid;
    const health = { processes: [], problems: ["bad"] };
    const gpus = await t.call("POST", "/api/v1/agents/hb-dup/heartbeat", {
      token,
      body: {
        gpus: [
          { uuid, memoryUsedMiB: 1 },
          { uuid, memoryUsedMiB: 4242, health },
        ],
      },
    });
    expect(gpus.status).toBe(400);
    expect(gpus.json.errors).toEqual([
      { path: "gpus.1.uuid", message: `GPU UUID ${uuid} is used twice: gpus.0.uuid has it too` },
    ]);
    const port = { hca: "mlx5_0", port: 1, state: "DOWN" };
    const ports = await t.call("POST", "/api/v1/agents/hb-dup/heartbeat", { token, body: { ports: [port, port] } });
    expect(ports.status).toBe(400);
    expect(ports.json.errors[0].path).toBe("ports.1.port");
    const node = (await t.admin("GET", "/api/v1/nodes/hb-dup")).json;
    expect(node.inventory.gpus[0].health.problems).toEqual([]);
    expect(node.inventory.hcas[0].ports[0].state).toBe("ACTIVE");
  });
});

describe("bounded lists and maps", () => {
  const entries = (n: number, value = "v") => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));

  it("refuses a deployment whose nodeSelector has 100,000 entries at once, with one error, and places nothing", async () => {
    const model = { weightsPath: "/models/m", profiles: [{ name: "p", engine: "vllm", gpuClass: "h100-80g" }] };
    expect((await t.admin("PUT", "/api/v1/models/bounded", { body: { spec: model } })).status).toBe(201);
    await t.settle();
    const events = (await t.admin("GET", "/api/v1/events")).json.items.length;
    const r = await t.admin("PUT", "/api/v1/deployments/huge-selector", {
      body: { spec: { model: "bounded", replicas: 1, nodeSelector: entries(100_000) } },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([{ path: "spec.nodeSelector", message: "Too big: expected at most 64 entries" }]);
    await t.settle();
    expect((await t.admin("GET", "/api/v1/deployments/huge-selector")).status).toBe(404);
    expect((await t.admin("GET", "/api/v1/events")).json.items).toHaveLength(events);
    const fits = await t.admin("PUT", "/api/v1/deployments/full-selector", {
      body: { spec: { model: "bounded", replicas: 0, nodeSelector: entries(64) } },
    });
    expect(fits.status).toBe(201);
  });

  it.each([
    ["labels", (b: ReturnType<typeof registerBody>) => ({ ...b, labels: entries(65) }), "labels"],
    [
      "engine versions",
      (b: ReturnType<typeof registerBody>) => ({
        ...b,
        inventory: { ...b.inventory, engines: { probed: [], versions: entries(33) } },
      }),
      "inventory.engines.versions",
    ],
    [
      "MIG instances",
      (b: ReturnType<typeof registerBody>) => ({
        ...b,
        inventory: migCard(
          b.inventory as Inventory,
          Array.from({ length: 9 }, (_, i) => instance(i, `MIG-${i}`)),
        ),
      }),
      "inventory.gpus.0.mig.instances",
    ],
  ])("refuses a registration with too many %s", async (_, change, path) => {
    const join = await joinToken();
    const r = await register(join.token, change(registerBody("too-many", nodeInventory("too-many"))));
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { path: string }) => e.path)).toEqual([path]);
  });

  it("refuses a profile with more than 256 env entries", async () => {
    const profile = { name: "p", engine: "vllm", gpuClass: "h100-80g", env: entries(257) };
    const r = await t.admin("PUT", "/api/v1/models/env-heavy", {
      body: { spec: { weightsPath: "/m", profiles: [profile] } },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([{ path: "spec.profiles.0.env", message: "Too big: expected at most 256 entries" }]);
  });

  it("shows every bound in the OpenAPI document: each list and map of a request body has its maximum", async () => {
    const doc = (await t.call("GET", "/openapi.json")).json;
    const unbounded: string[] = [];
    const seen = new Set<string>();
    const walk = (s: Record<string, unknown> | undefined, at: string): void => {
      if (!s || typeof s !== "object") return;
      if (typeof s.$ref === "string") {
        const name = s.$ref.split("/").pop()!;
        if (seen.has(name)) return;
        seen.add(name);
        walk(doc.components.schemas[name], `${at}<${name}>`);
        return;
      }
      if (s.type === "array" && s.maxItems === undefined) unbounded.push(`${at} (list)`);
      if (typeof s.additionalProperties === "object" && s.maxProperties === undefined) unbounded.push(`${at} (map)`);
      if (s.type === "string" && s.maxLength === undefined && !s.enum && !s.pattern) unbounded.push(`${at} (text)`);
      walk(s.items as Record<string, unknown>, `${at}[]`);
      if (typeof s.additionalProperties === "object")
        walk(s.additionalProperties as Record<string, unknown>, `${at}{}`);
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Record<string, unknown>>))
        walk(v, `${at}.${k}`);
      for (const k of ["anyOf", "oneOf", "allOf"])
        for (const v of (s[k] ?? []) as Record<string, unknown>[]) walk(v, at);
    };
    let bodies = 0;
    for (const [path, ops] of Object.entries<
      Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>
    >(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        const schema = op.requestBody?.content["application/json"]?.schema;
        if (schema) {
          bodies++;
          walk(schema, `${method} ${path}`);
        }
      }
    expect(bodies).toBeGreaterThan(5);
    expect(unbounded).toEqual([]);
    const spec = doc.components.schemas.DeploymentSpec;
    expect(spec.properties.nodeSelector.maxProperties).toBe(64);
    expect(doc.components.schemas.Gpu.properties.mig.properties.instances.maxItems).toBe(8);
    expect(doc.components.schemas.StartShard.properties.httpPort).toMatchObject({ minimum: 1, maximum: 65535 });
  });
});

describe("an API key on the control API", () => {
  it("is 403, saying where it goes; an unknown one is 401", async () => {
    const key = await t.admin("PUT", "/api/v1/api-keys/wrong-place", { body: { spec: {} } });
    const secret = key.json.secret as string;
    for (const [method, path] of [
      ["GET", "/api/v1/nodes"],
      ["GET", "/api/v1/models"],
      ["POST", "/api/v1/agents/register"],
      ["POST", "/api/v1/agents/n1/heartbeat"],
    ] as const) {
      const r = await t.call(method, path, { token: secret, body: method === "POST" ? {} : undefined });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json.code).toBe("forbidden");
      expect(r.json.detail).toContain(
        "an API key (llmgw_key_…) was sent, which reaches only the OpenAI-compatible /v1/*",
      );
    }
    const unknown = await t.call("GET", "/api/v1/nodes", { token: newSecret("key") });
    expect(unknown.status).toBe(401);
    expect(unknown.json.detail).toBe("unknown or deleted API key");
    expect(unknown.headers.get("www-authenticate")).toBe('Bearer realm="llmgw"');
  });
});

describe("a trailing slash", () => {
  it.each(["/api/v1/models/", "/api/v1/nodes/", "/api/v1/tokens/", "/healthz/"])(
    "GET %s is 404, not 405",
    async (path) => {
      const r = await t.admin("GET", path);
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.headers.get("allow")).toBeNull();
      expect(r.json.code).toBe("not_found");
      expect(r.json.detail).toBe(`no route GET ${path} (${path.slice(0, -1)}, without the trailing slash, is one)`);
    },
  );

  it("keeps 405 with Allow for a known path and another method", async () => {
    const r = await t.call("PUT", "/healthz");
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET");
  });
});
