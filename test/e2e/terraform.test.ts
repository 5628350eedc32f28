// Replays, against the API in-process, the HTTP that the two generic REST providers of docs/terraform/ send, step by
// step, and applies each provider's own rule for comparing the server's answer with the configuration. Terraform is
// not installed here (and cannot be downloaded), so this is how docs/terraform/*/main.tf is kept honest. The last
// replays run against two real `llmgw serve` instances on one sqld, writes sent to one and reads to the other.
//
// Sources the behaviour was read from (behaviour only, no code copied):
// - Mastercard/terraform-provider-restapi, tag v2.0.1, commit da64092737df0f13b2277938f364b712d2b9012c:
//   restapi/resource_api_object.go (Create/Read/Update/Delete/Exists/Import), restapi/api_object.go (paths, ids,
//   createObject/readObject/updateObject/deleteObject), restapi/delta_checker.go (getDelta), restapi/api_client.go
//   (sendRequest: Content-Type only with a body, any non-2xx is an error naming the code).
// - hashicorp/terraform-plugin-sdk, helper/schema/resource.go at commit 529b3607878f73c5399f3e8a9290a19ca5c1f055
//   (RefreshWithoutUpgrade: Exists, then Read — restapi's refresh is two GETs).
// - magodo/terraform-provider-restful, tag v0.25.2, commit a58546ddd1b7a1269162918128e205058b3552e4:
//   internal/provider/resource.go (Create/read/Update/Delete/ImportState), internal/provider/provider.go (defaults
//   POST/PUT/DELETE), internal/client/client.go (Content-Type only on writes with a body).
// - magodo/terraform-plugin-framework-helper, commit 7a00fd96c4c995edb611c9979f3586095dedf04d, dynamic/dynamic.go
//   (FromJSON: the read response converted to the type of the body in state; ToJSON: Go maps, so sorted keys).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { startInstances, startSqld } from "../helpers/instances.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: Json | undefined): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** JSON as Go's encoding/json writes a decoded value (maps with sorted keys, compact), which is how both providers
 * serialize bodies; Terraform's jsonencode also writes object attributes in lexical order, compact. */
function goJson(v: Json): string {
  const sorted = (x: Json): Json =>
    Array.isArray(x)
      ? x.map(sorted)
      : isObject(x)
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sorted(x[k]!)]),
          )
        : x;
  return JSON.stringify(sorted(v));
}
const jsonencode = goJson;

// --- the wire ---------------------------------------------------------------------------------------------------

type Sent = { method: string; path: string; headers: Record<string, string>; body?: string };
type Exchange = Sent & { status: number; json: unknown };

/** Where a Wire sends: the API in-process (a TestApp), or real instances over HTTP (`toInstances`). */
type Api = {
  call(
    method: string,
    path: string,
    c: { headers: Record<string, string>; body?: string },
  ): Promise<{ status: number; json: unknown }>;
};

/** Sends what a provider sends and records it, so that each step can assert its exact sequence. */
class Wire {
  log: Exchange[] = [];
  constructor(private readonly app: Api) {}

  async send(req: Sent): Promise<Exchange> {
    const r = await this.app.call(req.method, req.path, { headers: req.headers, body: req.body });
    const exchange = { ...req, status: r.status, json: r.json };
    this.log.push(exchange);
    return exchange;
  }

  /** What was sent since the last take. */
  take(): Exchange[] {
    const taken = this.log;
    this.log = [];
    return taken;
  }
}
const lines = (xs: Exchange[]) => xs.map((x) => `${x.method} ${x.path} ${x.status}`);
const ok = (status: number) => status >= 200 && status < 300;

type Plan = { action: "create" | "update" | "no-op"; attributes: string[] };

// --- Mastercard/restapi 2.0.1 -----------------------------------------------------------------------------------

/** resource "restapi_object" as configured in docs/terraform/restapi/main.tf (id_attribute "name" and create_method
 * "PUT" come from the provider block; update_method PUT, destroy_method DELETE, write_returns_object false). */
type RestapiConfig = { path: string; create_path: string; ignore_changes_to: string[]; data: string };
type RestapiState = {
  id: string;
  path: string;
  create_path: string | null;
  ignore_changes_to: string[] | null;
  data: string;
};

/**
 * getDelta of delta_checker.go: every key of `data` is compared with the response (objects recursively, lists as a
 * whole, a null in `data` matching an absent or null value), and every response key that `data` lacks is a change,
 * unless ignored. Returns what Read writes back into `data` when something changed.
 */
function restapiDelta(
  recorded: JsonObject,
  actual: JsonObject,
  ignore: readonly string[],
): { modified: JsonObject; changed: boolean } {
  const modified: JsonObject = {};
  let changed = false;
  for (const [key, want] of Object.entries(recorded)) {
    if (ignore.includes(key)) {
      modified[key] = want;
      continue;
    }
    const has = Object.hasOwn(actual, key);
    const got: Json = actual[key] ?? null;
    if (want === null) {
      modified[key] = got;
      if (has && got !== null) changed = true;
    } else if (isObject(want)) {
      if (!isObject(got)) {
        modified[key] = got;
        changed = true;
        continue;
      }
      const deeper = ignore.filter((p) => p.split(".")[0] === key).map((p) => p.split(".").slice(1).join("."));
      const sub = restapiDelta(want, got, deeper);
      modified[key] = sub.changed ? sub.modified : want;
      changed ||= sub.changed;
    } else if (Array.isArray(want) ? !isDeepStrictEqual(want, got) : want !== got) {
      modified[key] = got;
      changed = true;
    } else {
      modified[key] = want;
    }
  }
  for (const [key, got] of Object.entries(actual)) {
    if (Object.hasOwn(recorded, key) || ignore.includes(key)) continue;
    modified[key] = got;
    changed = true;
  }
  return { modified, changed };
}

/** One restapi_object: what the provider sends for each Terraform step, and the state it keeps. */
class RestapiObject {
  state: RestapiState | undefined;
  constructor(
    private readonly wire: Wire,
    private readonly token: string,
    readonly config: RestapiConfig,
  ) {}

  /** sendRequest: the provider's `headers`, plus Content-Type: application/json when there is a body. */
  private send(method: string, path: string, body?: string) {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    return this.wire.send({ method, path, headers, body });
  }

  /** readObject: GET path/{id}. A 404 is not an error: it clears the id (the object is gone). */
  private async readObject(s: { id: string; path: string }): Promise<JsonObject | undefined> {
    const r = await this.send("GET", `${s.path}/${s.id}`);
    if (r.status === 404) return undefined;
    if (!ok(r.status)) throw new Error(`unexpected response code '${r.status}'`);
    return r.json as JsonObject;
  }

  private stateFromConfig(id: string): RestapiState {
    const { path, create_path, ignore_changes_to, data } = this.config;
    return { id, path, create_path, ignore_changes_to, data };
  }

  /** Create: the id is `name` in `data` (id_attribute), known before the PUT; PUT create_path with {id} replaced and
   * `data` re-serialized; then, as write_returns_object is false, a GET. State keeps `data` as configured. */
  async create(): Promise<number> {
    const data = JSON.parse(this.config.data) as JsonObject;
    const id = data.name;
    if (typeof id !== "string") throw new Error("provided data does not have name attribute for the object's id");
    const put = await this.send("PUT", this.config.create_path.replace("{id}", id), goJson(data));
    if (!ok(put.status)) throw new Error(`unexpected response code '${put.status}'`);
    if (!(await this.readObject({ id, path: this.config.path }))) throw new Error("object gone right after create");
    this.state = this.stateFromConfig(id);
    return put.status;
  }

  /** Refresh (every plan, apply and destroy): the SDK calls Exists, then Read — two GETs. Exists reports a 404 as
   * existing (readObject swallows it), so Read runs and drops the object from state. Otherwise, unless
   * ignore_all_server_changes, a delta rewrites `data` in state, which the plan then shows as a diff. */
  async refresh(): Promise<void> {
    if (!this.state) return;
    await this.readObject(this.state);
    const api = await this.readObject(this.state);
    if (!api) {
      this.state = undefined;
      return;
    }
    const delta = restapiDelta(JSON.parse(this.state.data) as JsonObject, api, this.state.ignore_changes_to ?? []);
    if (delta.changed) this.state.data = goJson(delta.modified);
  }

  /** terraform plan: refresh, then the SDK diff of configured attributes (`data` is a string, compared as such). */
  async plan(): Promise<Plan> {
    await this.refresh();
    if (!this.state) return { action: "create", attributes: [] };
    const attributes = (["path", "create_path", "ignore_changes_to", "data"] as const).filter(
      (a) => !isDeepStrictEqual(this.state![a], this.config[a]),
    );
    return { action: attributes.length ? "update" : "no-op", attributes };
  }

  /** terraform apply of a plan. Returns the status of the write it sent, if any. */
  async apply(plan: Plan): Promise<number | undefined> {
    if (plan.action === "create") return this.create();
    if (plan.action === "no-op") return undefined;
    // Update: PUT path/{id} with the configured `data`, then (write_returns_object false) a GET.
    const s = this.state!;
    const put = await this.send("PUT", `${s.path}/${s.id}`, goJson(JSON.parse(this.config.data) as Json));
    if (!ok(put.status)) throw new Error(`unexpected response code '${put.status}'`);
    await this.readObject(s);
    this.state = this.stateFromConfig(s.id);
    return put.status;
  }

  /** Delete: DELETE path/{id}, no body. An error whose text contains "404" counts as done. */
  async destroy(): Promise<number> {
    const s = this.state!;
    const r = await this.send("DELETE", `${s.path}/${s.id}`);
    if (!ok(r.status) && r.status !== 404) throw new Error(`unexpected response code '${r.status}'`);
    this.state = undefined;
    return r.status;
  }

  /** terraform import <full path>: the importer splits it at the last slash into path and id, sets data to
   * `{ "id": "<id>" }` and GETs; then Terraform refreshes the imported state (Exists + Read), without the
   * configuration — so with no ignore_changes_to and no create_path. */
  async import(fullPath: string): Promise<void> {
    const cut = fullPath.lastIndexOf("/");
    const s: RestapiState = {
      id: fullPath.slice(cut + 1),
      path: fullPath.slice(0, cut),
      create_path: null,
      ignore_changes_to: null,
      data: "",
    };
    s.data = `{ "id": "${s.id}" }`;
    if (!(await this.readObject(s))) throw new Error("Cannot import non-existent remote object");
    this.state = s;
    await this.refresh();
  }
}

// --- magodo/restful 0.25.2 --------------------------------------------------------------------------------------

/** resource "restful_resource" as configured in docs/terraform/restful/main.tf (create_method "PUT" from the provider
 * block; update_method PUT and delete_method DELETE are the defaults; no read_path, so the id is `path`). */
type RestfulConfig = { path: string; body: JsonObject; check_existance: boolean };
type RestfulState = { id: string; path: string; body: Json; check_existance: boolean | null };

class TypeMismatch extends Error {}

/** dynamic.FromJSON(response, type of the body in state): objects keep only the keys of the state body (absent → null),
 * lists must have the same length, a null (dynamic) placeholder takes the response value as is. */
function conform(value: Json | undefined, shape: Json): Json {
  if (shape === null) return value ?? null;
  if (value === undefined || value === null) return null;
  if (Array.isArray(shape)) {
    if (!Array.isArray(value) || value.length !== shape.length) throw new TypeMismatch();
    return shape.map((s, i) => conform(value[i], s));
  }
  if (isObject(shape)) {
    if (!isObject(value)) throw new TypeMismatch();
    return Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, conform(value[k], s)]));
  }
  if (typeof value !== typeof shape) throw new TypeMismatch();
  return value;
}

/** read: the new body in state. When the response does not fit the state body's type, the provider falls back to
 * the whole response (FromJSONImplied), which then differs from the configuration. */
function restfulRead(response: Json, stateBody: Json): Json {
  try {
    return conform(response, stateBody);
  } catch (e) {
    if (e instanceof TypeMismatch) return response;
    throw e;
  }
}

/** One restful_resource: what the provider sends for each Terraform step, and the state it keeps. */
class RestfulResource {
  state: RestfulState | undefined;
  constructor(
    private readonly wire: Wire,
    private readonly token: string,
    readonly config: RestfulConfig,
  ) {}

  /** resty with security.http.token: Authorization: Bearer; Content-Type: application/json on writes with a body. */
  private send(method: string, path: string, body?: string) {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    return this.wire.send({ method, path, headers, body });
  }

  /** Create: with check_existance, GET `path` and refuse unless 404; PUT `path` with the body; the id is `path`; then
   * a read that sets `output` only (the body in state stays as planned). */
  async create(): Promise<number> {
    const { path, body, check_existance } = this.config;
    if (check_existance) {
      const r = await this.send("GET", path);
      if (r.status !== 404) throw new Error(`Resource already exists: ${path}`);
    }
    const put = await this.send("PUT", path, goJson(body));
    if (!ok(put.status)) throw new Error(`Create API returns ${put.status}`);
    const read = await this.send("GET", path);
    if (!ok(read.status)) throw new Error(`Read API returns ${read.status}`);
    this.state = { id: path, path, body, check_existance };
    return put.status;
  }

  /** Refresh: GET id; 404 removes the resource from state; otherwise the body in state becomes the response cut to
   * the state body's shape. One GET (no Exists in the plugin framework). */
  async refresh(): Promise<void> {
    if (!this.state) return;
    const r = await this.send("GET", this.state.id);
    if (r.status === 404) {
      this.state = undefined;
      return;
    }
    if (!ok(r.status)) throw new Error(`Read API returns ${r.status}`);
    this.state.body = restfulRead(r.json as Json, this.state.body);
  }

  async plan(): Promise<Plan> {
    await this.refresh();
    if (!this.state) return { action: "create", attributes: [] };
    const attributes = (["path", "body", "check_existance"] as const).filter(
      (a) => !isDeepStrictEqual(this.state![a], this.config[a]),
    );
    return { action: attributes.length ? "update" : "no-op", attributes };
  }

  /** Update: PUT id with the planned body only when its JSON differs from the body in state (an attribute-only change
   * sends no write); then a read for `output`. Returns the status of the write it sent, if any. */
  async apply(plan: Plan): Promise<number | undefined> {
    if (plan.action === "create") return this.create();
    if (plan.action === "no-op") return undefined;
    const s = this.state!;
    let status: number | undefined;
    if (goJson(s.body) !== goJson(this.config.body)) {
      status = (await this.send("PUT", s.id, goJson(this.config.body))).status;
      if (!ok(status)) throw new Error(`Update API returns ${status}`);
    }
    await this.send("GET", s.id);
    this.state = { ...s, body: this.config.body, check_existance: this.config.check_existance };
    return status;
  }

  /** Delete: DELETE id, no body; with the DELETE method a 404 counts as done. */
  async destroy(): Promise<number> {
    const r = await this.send("DELETE", this.state!.id);
    if (!ok(r.status) && r.status !== 404) throw new Error(`Delete API returns ${r.status}`);
    this.state = undefined;
    return r.status;
  }

  /** terraform import '<json>': ImportState sets id, path and body from the JSON (nothing else from the
   * configuration, so check_existance is null); then Terraform reads. With no body, the whole response is the body. */
  async import(spec: { id: string; path: string; body?: Json }): Promise<void> {
    this.state = { id: spec.id, path: spec.path, body: spec.body ?? null, check_existance: null };
    await this.refresh();
    if (!this.state) throw new Error("Cannot import non-existent remote object");
  }
}

// --- the configuration of docs/terraform/*/main.tf --------------------------------------------------------------

const MODEL = "llama-8b";
const modelSpec = {
  weightsPath: "/models/llama-3.1-8b",
  profiles: [{ name: "one-h100", engine: "vllm", gpuClass: "h100-80g" }],
};
const deploymentSpec = { model: MODEL, replicas: 1, profiles: ["one-h100"] };
const MODEL_PATH = `/api/v1/models/${MODEL}`;
const DEPLOYMENT_PATH = "/api/v1/deployments/chat";

describe("docs/terraform/*/main.tf", () => {
  const raw = (p: string) => readFileSync(join(ROOT, "docs", "terraform", p), "utf8");
  /** The HCL without comments, whitespace collapsed. */
  const tf = (p: string) => raw(p).replace(/#.*$/gm, "").replace(/\s+/g, " ");

  it("configure what the replays below assume", () => {
    const shared = [
      'model_name = "llama-8b"',
      'weightsPath = "/models/llama-3.1-8b"',
      '{ name = "one-h100", engine = "vllm", gpuClass = "h100-80g" }',
      "model = local.model_name",
      "replicas = 1",
      'profiles = ["one-h100"]',
      'create_method = "PUT"',
      "sensitive = true",
    ];
    const restapi = tf("restapi/main.tf");
    for (const s of [
      ...shared,
      'source = "Mastercard/restapi" version = "2.0.1"',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Terraform's interpolation, in the HCL this writes
      'Authorization = "Bearer ${var.llmgw_admin_token}"',
      'id_attribute = "name"',
      'path = "/api/v1/models" create_path = "/api/v1/models/{id}"',
      'path = "/api/v1/deployments" create_path = "/api/v1/deployments/{id}"',
      'ignore_changes_to = ["status", "metadata"]',
      "data = jsonencode({ name = local.model_name spec = {",
      'data = jsonencode({ name = "chat" spec = {',
    ]) {
      expect(restapi, s).toContain(s);
    }
    expect(raw("restapi/main.tf")).not.toMatch(
      /^\s*(write_returns_object|create_returns_object|copy_keys|ignore_all_server_changes|update_method|destroy_method)\s*=/m,
    );

    const restful = tf("restful/main.tf");
    for (const s of [
      ...shared,
      'source = "magodo/restful" version = "0.25.2"',
      "token = { token = var.llmgw_admin_token",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Terraform's interpolation, in the HCL this writes
      'path = "/api/v1/models/${local.model_name}"',
      'path = "/api/v1/deployments/chat" check_existance = true',
      "body = { spec = {",
    ]) {
      expect(restful, s).toContain(s);
    }
    expect(restful.match(/check_existance = true/g)).toHaveLength(2);
    expect(raw("restful/main.tf")).not.toMatch(
      /^\s*(read_path|update_path|delete_path|update_method|delete_method|write_only_attrs|output_attrs)\s*=/m,
    );
  });
});

/**
 * Destroy as both providers do it — refresh, DELETE dependents first (204) — then again from the saved state (404,
 * done).
 */
async function destroyTwice<S>(t: TestApp, wire: Wire, deployment: Destroyable<S>, model: Destroyable<S>) {
  for (const r of [deployment, model]) await r.refresh();
  const last = { deployment: deployment.state, model: model.state };
  wire.take();
  expect(await deployment.destroy()).toBe(204);
  expect(await model.destroy()).toBe(204);
  const sent = wire.take();
  expect(lines(sent)).toEqual([`DELETE ${DEPLOYMENT_PATH} 204`, `DELETE ${MODEL_PATH} 204`]);
  expect(sent[0]!.headers).toEqual({ authorization: `Bearer ${t.adminToken}` });
  expect(sent[0]!.body).toBeUndefined();
  expect((await t.admin("GET", MODEL_PATH)).status).toBe(404);
  expect((await t.admin("GET", DEPLOYMENT_PATH)).status).toBe(404);

  // A destroy whose DELETE went through but whose state was not saved (or `destroy -refresh=false`) sends it again.
  deployment.state = last.deployment;
  model.state = last.model;
  await expect(deployment.destroy()).resolves.toBe(404);
  await expect(model.destroy()).resolves.toBe(404);
  expect(lines(wire.take())).toEqual([`DELETE ${DEPLOYMENT_PATH} 404`, `DELETE ${MODEL_PATH} 404`]);
  expect(model.state).toBeUndefined();
}
type Destroyable<S> = { state: S | undefined; refresh(): Promise<void>; destroy(): Promise<number> };

// --- the replays ------------------------------------------------------------------------------------------------

describe("Mastercard/restapi 2.0.1 (restapi_object)", () => {
  let t: TestApp;
  let wire: Wire;
  let model: RestapiObject;
  let deployment: RestapiObject;
  const both = () => [model, deployment];

  beforeAll(async () => {
    t = await createTestApp();
    wire = new Wire(t);
    const object = (kind: string, name: string, spec: JsonObject) =>
      new RestapiObject(wire, t.adminToken, {
        path: `/api/v1/${kind}`,
        create_path: `/api/v1/${kind}/{id}`,
        ignore_changes_to: ["status", "metadata"],
        data: jsonencode({ name, spec }),
      });
    model = object("models", MODEL, modelSpec);
    deployment = object("deployments", "chat", deploymentSpec);
  });
  afterAll(() => t?.close());

  it("create: PUT {path}/{name} with data as is (201), then GET (read after write)", async () => {
    for (const r of both()) expect(await r.plan()).toEqual({ action: "create", attributes: [] });
    expect(wire.take()).toEqual([]);
    for (const r of both()) expect(await r.apply({ action: "create", attributes: [] })).toBe(201);
    const sent = wire.take();
    expect(lines(sent)).toEqual([
      `PUT ${MODEL_PATH} 201`,
      `GET ${MODEL_PATH} 200`,
      `PUT ${DEPLOYMENT_PATH} 201`,
      `GET ${DEPLOYMENT_PATH} 200`,
    ]);
    expect(sent[0]).toMatchObject({
      headers: { authorization: `Bearer ${t.adminToken}`, "content-type": "application/json" },
      body: '{"name":"llama-8b","spec":{"profiles":[{"engine":"vllm","gpuClass":"h100-80g","name":"one-h100"}],"weightsPath":"/models/llama-3.1-8b"}}',
    });
    expect(sent[2]!.body).toBe('{"name":"chat","spec":{"model":"llama-8b","profiles":["one-h100"],"replicas":1}}');
    expect(sent[1]!.headers).toEqual({ authorization: `Bearer ${t.adminToken}` });
    expect(sent[1]!.json).toMatchObject({
      name: MODEL,
      spec: modelSpec,
      status: { deployments: [] },
      metadata: { version: 1 },
    });
    expect(model.state).toMatchObject({ id: MODEL, data: model.config.data });
  });

  it("plan on unchanged config: Exists GET + Read GET per object, and no difference", async () => {
    for (const r of both()) expect(await r.plan()).toEqual({ action: "no-op", attributes: [] });
    expect(lines(wire.take())).toEqual([
      `GET ${MODEL_PATH} 200`,
      `GET ${MODEL_PATH} 200`,
      `GET ${DEPLOYMENT_PATH} 200`,
      `GET ${DEPLOYMENT_PATH} 200`,
    ]);
    // status and metadata are in every response; without ignore_changes_to each would be a difference.
    const api = (await t.admin("GET", MODEL_PATH)).json as JsonObject;
    expect(restapiDelta(JSON.parse(model.config.data) as JsonObject, api, []).changed).toBe(true);
    expect(restapiDelta(JSON.parse(model.config.data) as JsonObject, api, ["status", "metadata"]).changed).toBe(false);
  });

  it("out-of-band change: the refresh reports it, and apply PUTs the config back (200) and reads it", async () => {
    expect((await t.admin("PUT", DEPLOYMENT_PATH, { body: { spec: { ...deploymentSpec, replicas: 3 } } })).status).toBe(
      200,
    );
    expect(
      (await t.admin("PUT", MODEL_PATH, { body: { spec: { ...modelSpec, weightsPath: "/models/other" } } })).status,
    ).toBe(200);

    const plans = [];
    for (const r of both()) plans.push(await r.plan());
    expect(plans).toEqual([
      { action: "update", attributes: ["data"] },
      { action: "update", attributes: ["data"] },
    ]);
    expect(JSON.parse(deployment.state!.data)).toEqual({ name: "chat", spec: { ...deploymentSpec, replicas: 3 } });
    wire.take();

    for (const [i, r] of both().entries()) expect(await r.apply(plans[i]!)).toBe(200);
    const sent = wire.take();
    expect(lines(sent)).toEqual([
      `PUT ${MODEL_PATH} 200`,
      `GET ${MODEL_PATH} 200`,
      `PUT ${DEPLOYMENT_PATH} 200`,
      `GET ${DEPLOYMENT_PATH} 200`,
    ]);
    expect(sent[2]!.body).toBe(deployment.config.data);
    expect(sent[3]!.json).toMatchObject({ spec: deploymentSpec, metadata: { version: 3 } });

    for (const r of both()) expect((await r.plan()).action).toBe("no-op");
  });

  it("out-of-band addition of a field the config leaves out (pool) is a difference too, and apply removes it", async () => {
    expect(
      (await t.admin("PUT", DEPLOYMENT_PATH, { body: { spec: { ...deploymentSpec, pool: "batch" } } })).status,
    ).toBe(200);
    const plan = await deployment.plan();
    expect(plan).toEqual({ action: "update", attributes: ["data"] });
    expect(await deployment.apply(plan)).toBe(200);
    expect((await t.admin("GET", DEPLOYMENT_PATH)).json.spec).toEqual(deploymentSpec);
    expect((await deployment.plan()).action).toBe("no-op");
    wire.take();
  });

  it("out-of-band delete: both refresh GETs answer 404, the object leaves state, and apply creates it again (201)", async () => {
    for (const p of [DEPLOYMENT_PATH, MODEL_PATH]) expect((await t.admin("DELETE", p)).status).toBe(204);

    const plans = [];
    for (const r of both()) plans.push(await r.plan());
    expect(plans.map((p) => p.action)).toEqual(["create", "create"]);
    expect(model.state).toBeUndefined();
    expect(lines(wire.take())).toEqual([
      `GET ${MODEL_PATH} 404`,
      `GET ${MODEL_PATH} 404`,
      `GET ${DEPLOYMENT_PATH} 404`,
      `GET ${DEPLOYMENT_PATH} 404`,
    ]);

    for (const [i, r] of both().entries()) expect(await r.apply(plans[i]!)).toBe(201);
    expect(lines(wire.take())).toEqual([
      `PUT ${MODEL_PATH} 201`,
      `GET ${MODEL_PATH} 200`,
      `PUT ${DEPLOYMENT_PATH} 201`,
      `GET ${DEPLOYMENT_PATH} 200`,
    ]);
    for (const r of both()) expect((await r.plan()).action).toBe("no-op");
    wire.take();
  });

  it("create over an object that already exists: the PUT replaces it (200) and the provider adopts it as created", async () => {
    expect(
      (await t.admin("PUT", "/api/v1/models/taken", { body: { spec: { ...modelSpec, weightsPath: "/theirs" } } }))
        .status,
    ).toBe(201);
    const taken = new RestapiObject(wire, t.adminToken, {
      ...model.config,
      data: jsonencode({ name: "taken", spec: modelSpec }),
    });
    expect(await taken.apply(await taken.plan())).toBe(200);
    expect(lines(wire.take())).toEqual(["PUT /api/v1/models/taken 200", "GET /api/v1/models/taken 200"]);
    expect((await t.admin("GET", "/api/v1/models/taken")).json.spec.weightsPath).toBe(modelSpec.weightsPath);
  });

  it("import by full path: GET, then the refresh; `data` differs once, and the update it plans is a PUT that changes nothing", async () => {
    const before = (await t.admin("GET", MODEL_PATH)).json.metadata.version as number;
    model.state = undefined; // terraform state rm
    await model.import(MODEL_PATH);
    expect(lines(wire.take())).toEqual([`GET ${MODEL_PATH} 200`, `GET ${MODEL_PATH} 200`, `GET ${MODEL_PATH} 200`]);
    expect(model.state).toMatchObject({ id: MODEL, path: "/api/v1/models" });
    // With no ignore_changes_to in the imported state, Read writes the whole response (and `"id": null`) into data.
    expect(Object.keys(JSON.parse(model.state!.data) as JsonObject)).toEqual([
      "id",
      "metadata",
      "name",
      "spec",
      "status",
    ]);
    expect(JSON.parse(model.state!.data)).toMatchObject({ id: null, name: MODEL, spec: modelSpec });

    const plan = await model.plan();
    expect(plan).toEqual({ action: "update", attributes: ["create_path", "ignore_changes_to", "data"] });
    wire.take();
    expect(await model.apply(plan)).toBe(200);
    const sent = wire.take();
    expect(lines(sent)).toEqual([`PUT ${MODEL_PATH} 200`, `GET ${MODEL_PATH} 200`]);
    expect(sent[1]!.json).toMatchObject({ spec: modelSpec, metadata: { version: before } });
    expect(await model.plan()).toEqual({ action: "no-op", attributes: [] });
    wire.take();
  });

  it("destroy: refresh, then DELETE (204), dependents first; a repeated DELETE answers 404, which the provider counts as done", async () => {
    await destroyTwice(t, wire, deployment, model);
  });
});

describe("magodo/restful 0.25.2 (restful_resource)", () => {
  let t: TestApp;
  let wire: Wire;
  let model: RestfulResource;
  let deployment: RestfulResource;
  const both = () => [model, deployment];

  beforeAll(async () => {
    t = await createTestApp();
    wire = new Wire(t);
    model = new RestfulResource(wire, t.adminToken, {
      path: MODEL_PATH,
      body: { spec: modelSpec },
      check_existance: true,
    });
    deployment = new RestfulResource(wire, t.adminToken, {
      path: DEPLOYMENT_PATH,
      body: { spec: deploymentSpec },
      check_existance: true,
    });
  });
  afterAll(() => t?.close());

  it("create: GET (404, check_existance), PUT path with the body (201), then GET (read after write)", async () => {
    for (const r of both()) expect(await r.plan()).toEqual({ action: "create", attributes: [] });
    for (const r of both()) expect(await r.apply({ action: "create", attributes: [] })).toBe(201);
    const sent = wire.take();
    expect(lines(sent)).toEqual([
      `GET ${MODEL_PATH} 404`,
      `PUT ${MODEL_PATH} 201`,
      `GET ${MODEL_PATH} 200`,
      `GET ${DEPLOYMENT_PATH} 404`,
      `PUT ${DEPLOYMENT_PATH} 201`,
      `GET ${DEPLOYMENT_PATH} 200`,
    ]);
    expect(sent[1]).toMatchObject({
      headers: { authorization: `Bearer ${t.adminToken}`, "content-type": "application/json" },
      body: '{"spec":{"profiles":[{"engine":"vllm","gpuClass":"h100-80g","name":"one-h100"}],"weightsPath":"/models/llama-3.1-8b"}}',
    });
    expect(sent[4]!.body).toBe('{"spec":{"model":"llama-8b","profiles":["one-h100"],"replicas":1}}');
    expect(sent[2]!.headers).toEqual({ authorization: `Bearer ${t.adminToken}` });
    expect(model.state).toEqual({ id: MODEL_PATH, path: MODEL_PATH, body: { spec: modelSpec }, check_existance: true });
  });

  it("check_existance: a create over an object someone else declared stops after the GET (200), sending no PUT", async () => {
    expect(
      (await t.admin("PUT", "/api/v1/models/taken", { body: { spec: { ...modelSpec, weightsPath: "/theirs" } } }))
        .status,
    ).toBe(201);
    const taken = new RestfulResource(wire, t.adminToken, { ...model.config, path: "/api/v1/models/taken" });
    await expect(taken.apply(await taken.plan())).rejects.toThrow("Resource already exists");
    expect(lines(wire.take())).toEqual(["GET /api/v1/models/taken 200"]);
    expect((await t.admin("GET", "/api/v1/models/taken")).json).toMatchObject({
      spec: { weightsPath: "/theirs" },
      metadata: { version: 1 },
    });
  });

  it("plan on unchanged config: one GET per resource; the response cut to the body's keys equals the body", async () => {
    for (const r of both()) expect(await r.plan()).toEqual({ action: "no-op", attributes: [] });
    const sent = wire.take();
    expect(lines(sent)).toEqual([`GET ${MODEL_PATH} 200`, `GET ${DEPLOYMENT_PATH} 200`]);
    expect(Object.keys(sent[0]!.json as JsonObject)).toEqual(["name", "spec", "status", "metadata"]);
    expect(model.state!.body).toEqual({ spec: modelSpec });
  });

  it("out-of-band change: the refresh reports it, and apply PUTs the body back (200) and reads it", async () => {
    expect((await t.admin("PUT", DEPLOYMENT_PATH, { body: { spec: { ...deploymentSpec, replicas: 3 } } })).status).toBe(
      200,
    );
    expect(
      (await t.admin("PUT", MODEL_PATH, { body: { spec: { ...modelSpec, weightsPath: "/models/other" } } })).status,
    ).toBe(200);

    const plans = [];
    for (const r of both()) plans.push(await r.plan());
    expect(plans).toEqual([
      { action: "update", attributes: ["body"] },
      { action: "update", attributes: ["body"] },
    ]);
    expect(deployment.state!.body).toEqual({ spec: { ...deploymentSpec, replicas: 3 } });
    wire.take();

    for (const [i, r] of both().entries()) expect(await r.apply(plans[i]!)).toBe(200);
    const sent = wire.take();
    expect(lines(sent)).toEqual([
      `PUT ${MODEL_PATH} 200`,
      `GET ${MODEL_PATH} 200`,
      `PUT ${DEPLOYMENT_PATH} 200`,
      `GET ${DEPLOYMENT_PATH} 200`,
    ]);
    expect(sent[2]!.body).toBe(goJson({ spec: deploymentSpec }));
    expect(sent[3]!.json).toMatchObject({ spec: deploymentSpec, metadata: { version: 3 } });

    for (const r of both()) expect((await r.plan()).action).toBe("no-op");
    wire.take();
  });

  it("out-of-band addition of a field the body leaves out (pool) is NOT seen: the provider keeps only the body's keys", async () => {
    expect(
      (await t.admin("PUT", DEPLOYMENT_PATH, { body: { spec: { ...deploymentSpec, pool: "batch" } } })).status,
    ).toBe(200);
    expect(await deployment.plan()).toEqual({ action: "no-op", attributes: [] });
    expect(wire.take()[0]!.json).toMatchObject({ spec: { pool: "batch" } });
    // The documented way out, writing the field with a null placeholder, is refused by llmgw.
    const nullPool = await t.admin("PUT", DEPLOYMENT_PATH, { body: { spec: { ...deploymentSpec, pool: null } } });
    expect(nullPool.status).toBe(400);
    expect(nullPool.json.errors[0].path).toBe("spec.pool");
    expect((await t.admin("PUT", DEPLOYMENT_PATH, { body: { spec: deploymentSpec } })).status).toBe(200);
  });

  it("out-of-band delete: the refresh GET answers 404, the resource leaves state, and apply creates it again (201)", async () => {
    for (const p of [DEPLOYMENT_PATH, MODEL_PATH]) expect((await t.admin("DELETE", p)).status).toBe(204);

    const plans = [];
    for (const r of both()) plans.push(await r.plan());
    expect(plans.map((p) => p.action)).toEqual(["create", "create"]);
    expect(model.state).toBeUndefined();
    expect(lines(wire.take())).toEqual([`GET ${MODEL_PATH} 404`, `GET ${DEPLOYMENT_PATH} 404`]);

    for (const [i, r] of both().entries()) expect(await r.apply(plans[i]!)).toBe(201);
    expect(lines(wire.take())).toEqual([
      `GET ${MODEL_PATH} 404`,
      `PUT ${MODEL_PATH} 201`,
      `GET ${MODEL_PATH} 200`,
      `GET ${DEPLOYMENT_PATH} 404`,
      `PUT ${DEPLOYMENT_PATH} 201`,
      `GET ${DEPLOYMENT_PATH} 200`,
    ]);
    for (const r of both()) expect((await r.plan()).action).toBe("no-op");
    wire.take();
  });

  it("import with a null placeholder body: one GET, the body equals the config, and the one-time check_existance update sends no PUT", async () => {
    model.state = undefined; // terraform state rm
    await model.import({ id: MODEL_PATH, path: MODEL_PATH, body: { spec: null } });
    expect(lines(wire.take())).toEqual([`GET ${MODEL_PATH} 200`]);
    expect(model.state).toEqual({ id: MODEL_PATH, path: MODEL_PATH, body: { spec: modelSpec }, check_existance: null });

    const plan = await model.plan();
    expect(plan).toEqual({ action: "update", attributes: ["check_existance"] });
    wire.take();
    expect(await model.apply(plan)).toBeUndefined();
    expect(lines(wire.take())).toEqual([`GET ${MODEL_PATH} 200`]);
    expect(await model.plan()).toEqual({ action: "no-op", attributes: [] });
    wire.take();
  });

  it("import without a body: the whole response becomes the body, and the update it plans is a PUT that changes nothing", async () => {
    const before = (await t.admin("GET", MODEL_PATH)).json.metadata.version as number;
    model.state = undefined;
    await model.import({ id: MODEL_PATH, path: MODEL_PATH });
    expect(Object.keys(model.state!.body as JsonObject)).toEqual(["name", "spec", "status", "metadata"]);
    const plan = await model.plan();
    expect(plan).toEqual({ action: "update", attributes: ["body", "check_existance"] });
    wire.take();
    expect(await model.apply(plan)).toBe(200);
    const sent = wire.take();
    expect(lines(sent)).toEqual([`PUT ${MODEL_PATH} 200`, `GET ${MODEL_PATH} 200`]);
    expect(sent[1]!.json).toMatchObject({ spec: modelSpec, metadata: { version: before } });
    expect(await model.plan()).toEqual({ action: "no-op", attributes: [] });
    wire.take();
  });

  it("destroy: refresh, then DELETE (204), dependents first; a repeated DELETE answers 404, which the provider counts as done", async () => {
    await destroyTwice(t, wire, deployment, model);
  });
});

// --- two instances ----------------------------------------------------------------------------------------------

/**
 * Two `llmgw serve` instances on one database behind a balancer with no affinity, at its least kind: every write the
 * provider sends goes to `writes`, every read to `reads`.
 */
function toInstances(writes: string, reads: string): Api {
  return {
    async call(method, path, c) {
      const r = await fetch(`${method === "GET" ? reads : writes}${path}`, {
        method,
        headers: c.headers,
        body: c.body,
      });
      const text = await r.text();
      return {
        status: r.status,
        json: text && /json/.test(r.headers.get("content-type") ?? "") ? JSON.parse(text) : undefined,
      };
    },
  };
}

describe("both providers against two instances on one libSQL server: writes through one, reads through the other", () => {
  const ADMIN = "terraform-two-instances-admin-token-0001";
  let sqld: Awaited<ReturnType<typeof startSqld>>;
  let two: Awaited<ReturnType<typeof startInstances>>;
  let wire: Wire;

  beforeAll(async () => {
    sqld = await startSqld();
    two = await startInstances(sqld.url, 2, { LLMGW_ADMIN_TOKEN: ADMIN });
    wire = new Wire(toInstances(two.instances[0]!.url, two.instances[1]!.url));
  }, 60_000);
  afterAll(async () => {
    await two?.close();
    await sqld?.close();
  });

  it("restapi: the read after each write, on the other instance, returns what was written, and the plan after it is a no-op", async () => {
    const object = (kind: string, name: string, spec: JsonObject) =>
      new RestapiObject(wire, ADMIN, {
        path: `/api/v1/${kind}`,
        create_path: `/api/v1/${kind}/{id}`,
        ignore_changes_to: ["status", "metadata"],
        data: jsonencode({ name, spec }),
      });
    const model = object("models", MODEL, modelSpec);
    const deployment = object("deployments", "chat", deploymentSpec);
    for (const r of [model, deployment]) expect(await r.apply(await r.plan())).toBe(201);
    let sent = wire.take();
    expect(lines(sent)).toEqual([
      `PUT ${MODEL_PATH} 201`,
      `GET ${MODEL_PATH} 200`,
      `PUT ${DEPLOYMENT_PATH} 201`,
      `GET ${DEPLOYMENT_PATH} 200`,
    ]);
    expect(sent[1]!.json).toMatchObject({ name: MODEL, spec: modelSpec, metadata: { version: 1 } });
    expect(sent[3]!.json).toMatchObject({ name: "chat", spec: deploymentSpec, metadata: { version: 1 } });
    for (const r of [model, deployment]) expect(await r.plan()).toEqual({ action: "no-op", attributes: [] });

    // a changed configuration: PUT on one, the refresh on the other sees it at once
    const scaled = object("deployments", "chat", { ...deploymentSpec, replicas: 2 });
    scaled.state = deployment.state;
    const plan = await scaled.plan();
    expect(plan).toEqual({ action: "update", attributes: ["data"] });
    wire.take();
    expect(await scaled.apply(plan)).toBe(200);
    sent = wire.take();
    expect(lines(sent)).toEqual([`PUT ${DEPLOYMENT_PATH} 200`, `GET ${DEPLOYMENT_PATH} 200`]);
    expect(sent[1]!.json).toMatchObject({ spec: { ...deploymentSpec, replicas: 2 }, metadata: { version: 2 } });
    expect(await scaled.plan()).toEqual({ action: "no-op", attributes: [] });

    // destroy on one; a refresh of the state as it was, on the other, finds both gone and plans to create them again
    const saved = [scaled.state, model.state];
    for (const r of [scaled, model]) expect(await r.destroy()).toBe(204);
    [scaled.state, model.state] = saved;
    wire.take();
    for (const r of [scaled, model]) expect(await r.plan()).toEqual({ action: "create", attributes: [] });
    expect(lines(wire.take())).toEqual([
      `GET ${DEPLOYMENT_PATH} 404`,
      `GET ${DEPLOYMENT_PATH} 404`,
      `GET ${MODEL_PATH} 404`,
      `GET ${MODEL_PATH} 404`,
    ]);
  });

  it("restful: check_existance and the read after write run on the other instance; the plan after each write is a no-op", async () => {
    const model = new RestfulResource(wire, ADMIN, {
      path: MODEL_PATH,
      body: { spec: modelSpec },
      check_existance: true,
    });
    const deployment = new RestfulResource(wire, ADMIN, {
      path: DEPLOYMENT_PATH,
      body: { spec: deploymentSpec },
      check_existance: true,
    });
    for (const r of [model, deployment]) expect(await r.apply(await r.plan())).toBe(201);
    let sent = wire.take();
    expect(lines(sent)).toEqual([
      `GET ${MODEL_PATH} 404`,
      `PUT ${MODEL_PATH} 201`,
      `GET ${MODEL_PATH} 200`,
      `GET ${DEPLOYMENT_PATH} 404`,
      `PUT ${DEPLOYMENT_PATH} 201`,
      `GET ${DEPLOYMENT_PATH} 200`,
    ]);
    expect(sent[2]!.json).toMatchObject({ spec: modelSpec, metadata: { version: 1 } });
    expect(sent[5]!.json).toMatchObject({ spec: deploymentSpec, metadata: { version: 1 } });
    for (const r of [model, deployment]) expect(await r.plan()).toEqual({ action: "no-op", attributes: [] });

    const scaled = new RestfulResource(wire, ADMIN, {
      ...deployment.config,
      body: { spec: { ...deploymentSpec, replicas: 2 } },
    });
    scaled.state = deployment.state;
    const plan = await scaled.plan();
    expect(plan).toEqual({ action: "update", attributes: ["body"] });
    wire.take();
    expect(await scaled.apply(plan)).toBe(200);
    sent = wire.take();
    expect(lines(sent)).toEqual([`PUT ${DEPLOYMENT_PATH} 200`, `GET ${DEPLOYMENT_PATH} 200`]);
    expect(sent[1]!.json).toMatchObject({ spec: { ...deploymentSpec, replicas: 2 }, metadata: { version: 2 } });
    expect(await scaled.plan()).toEqual({ action: "no-op", attributes: [] });

    const saved = [scaled.state, model.state];
    for (const r of [scaled, model]) expect(await r.destroy()).toBe(204);
    [scaled.state, model.state] = saved;
    wire.take();
    for (const r of [scaled, model]) expect(await r.plan()).toEqual({ action: "create", attributes: [] });
    expect(lines(wire.take())).toEqual([`GET ${DEPLOYMENT_PATH} 404`, `GET ${MODEL_PATH} 404`]);
  });
});
