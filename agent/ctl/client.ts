// `llmgw ctl`'s calls to the control API: one function per endpoint, through the global fetch, every answer parsed
// with the schema the API answers with. Each call also returns the answer as sent (`raw`), which `--json` prints.
import { ApiKey, ApiKeyWithSecret } from "../../shared/schemas/api-key.js";
import { Deployment } from "../../shared/schemas/deployment.js";
import { Model } from "../../shared/schemas/model.js";
import { Node, NodeSummary } from "../../shared/schemas/node.js";
import { NvlinkView } from "../../shared/schemas/nvlink.js";
import { Problem } from "../../shared/schemas/problem.js";
import { ReplicaView } from "../../shared/schemas/replica.js";
import { AdminToken, CreatedAdminToken, CreatedJoinToken, JoinToken } from "../../shared/schemas/token.js";
import { z } from "../../shared/z.js";
import { CtlError } from "./errors.js";
import { Capacity } from "../../shared/schemas/plan.js";

export type CtlClientOptions = { server: string; token: string; timeoutMs?: number };
export type CtlClient = ReturnType<typeof createCtlClient>;
export type Answer<T> = { status: number; data: T; raw: unknown; headers: Headers };

/** The declarative kinds: where they live and what they answer. */
export const DECLARED = {
  Model: { path: "models", what: "model", schema: Model },
  Deployment: { path: "deployments", what: "deployment", schema: Deployment },
  ApiKey: { path: "api-keys", what: "API key", schema: ApiKey },
} as const;
export type DeclaredKind = keyof typeof DECLARED;
type DeclaredOf = { Model: z.infer<typeof Model>; Deployment: z.infer<typeof Deployment>; ApiKey: z.infer<typeof ApiKey> };

const list = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item) });
const NONE = z.unknown();
const seg = encodeURIComponent;

/** A client of one control plane with one admin token. */
export function createCtlClient(o: CtlClientOptions) {
  const base = o.server.replace(/\/+$/, "");
  async function call<T extends z.ZodType>(method: string, path: string, schema: T, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<z.infer<T>>> {
    const what = `${method} ${path}`;
    const timeoutMs = o.timeoutMs ?? 30_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${o.token}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: timeout,
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = timeout.aborted ? `no answer within ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e)));
      throw new CtlError(0, `cannot reach ${base}: ${why}`, undefined, true);
    }
    const text = await res.text().catch(() => "");
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new CtlError(res.status, `${what}: HTTP ${res.status} with a body that is not JSON (is ${base} an llmgw server?): ${text.slice(0, 120)}`);
    }
    if (!res.ok) {
      const p = Problem.safeParse(json);
      if (p.success) throw new CtlError(res.status, p.data.detail, p.data);
      throw new CtlError(res.status, `${what}: HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw new CtlError(res.status, `${what}: unexpected answer (${i?.path.join(".") || "body"}: ${i?.message}); is the server another version?`);
    }
    return { status: res.status, data: parsed.data, raw: json, headers: res.headers };
  }

  return {
    /** GET /api/v1/nodes, optionally filtered by state and pool. */
    listNodes: (q: { state?: string; pool?: string } = {}) => {
      const qs = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => !!e[1])).toString();
      return call("GET", `/api/v1/nodes${qs ? `?${qs}` : ""}`, list(NodeSummary));
    },
    /** GET /api/v1/nodes/{id}: devices, shards, inventory. */
    getNode: (id: string) => call("GET", `/api/v1/nodes/${seg(id)}`, Node),
    /** POST /api/v1/nodes/{id}/cordon|uncordon|drain. */
    nodeAction: (id: string, verb: "cordon" | "uncordon" | "drain") => call("POST", `/api/v1/nodes/${seg(id)}/${verb}`, NodeSummary),
    /** DELETE /api/v1/nodes/{id}: forget a node. */
    deleteNode: (id: string) => call("DELETE", `/api/v1/nodes/${seg(id)}`, NONE),

    /** GET /api/v1/<kind>. */
    listDeclared: <K extends DeclaredKind>(kind: K) =>
      call("GET", `/api/v1/${DECLARED[kind].path}`, list(DECLARED[kind].schema)) as Promise<Answer<{ items: DeclaredOf[K][] }>>,
    /** GET /api/v1/<kind>/{name}. */
    getDeclared: <K extends DeclaredKind>(kind: K, name: string) =>
      call("GET", `/api/v1/${DECLARED[kind].path}/${seg(name)}`, DECLARED[kind].schema) as Promise<Answer<DeclaredOf[K]>>,
    /** PUT /api/v1/<kind>/{name} with `{spec}`; 201 created, 200 replaced or unchanged. A created API key carries its secret. */
    putDeclared: <K extends DeclaredKind>(kind: K, name: string, spec: unknown, headers: Record<string, string> = {}) =>
      call("PUT", `/api/v1/${DECLARED[kind].path}/${seg(name)}`, kind === "ApiKey" ? ApiKeyWithSecret.partial({ secret: true }) : DECLARED[kind].schema, { spec }, headers) as Promise<
        Answer<DeclaredOf[K] & { secret?: string }>
      >,
    /** DELETE /api/v1/<kind>/{name}. */
    deleteDeclared: (kind: DeclaredKind, name: string) => call("DELETE", `/api/v1/${DECLARED[kind].path}/${seg(name)}`, NONE),
    /** POST /api/v1/api-keys/{name}/rotate: a new secret, shown once. */
    rotateApiKey: (name: string) => call("POST", `/api/v1/api-keys/${seg(name)}/rotate`, ApiKeyWithSecret),

    /** GET /api/v1/replicas, optionally of one deployment. */
    listReplicas: (deployment?: string) => call("GET", `/api/v1/replicas${deployment ? `?deployment=${seg(deployment)}` : ""}`, list(ReplicaView)),
    /** GET /api/v1/replicas/{id}. */
    getReplica: (id: string) => call("GET", `/api/v1/replicas/${seg(id)}`, ReplicaView),
    /** GET /api/v1/plan: devices by class and what more fits. */
    plan: () => call("GET", "/api/v1/plan", Capacity),
    /** GET /api/v1/nvlink: every multi-node NVLink domain, its trays and GPUs, and what keeps each tray out. */
    nvlink: () => call("GET", "/api/v1/nvlink", NvlinkView),

    /** GET /api/v1/tokens: admin tokens, never their secrets. */
    listAdminTokens: () => call("GET", "/api/v1/tokens", list(AdminToken)),
    /** POST /api/v1/tokens: a new admin token, shown once. */
    createAdminToken: (name: string) => call("POST", "/api/v1/tokens", CreatedAdminToken, { name }),
    /** DELETE /api/v1/tokens/{id}. */
    deleteAdminToken: (id: string) => call("DELETE", `/api/v1/tokens/${seg(id)}`, NONE),
    /** GET /api/v1/join-tokens. */
    listJoinTokens: () => call("GET", "/api/v1/join-tokens", list(JoinToken)),
    /** POST /api/v1/join-tokens: a new join token, shown once. */
    createJoinToken: (req: { name?: string; maxUses?: number; expiresInS?: number }) => call("POST", "/api/v1/join-tokens", CreatedJoinToken, req),
    /** DELETE /api/v1/join-tokens/{id}. */
    deleteJoinToken: (id: string) => call("DELETE", `/api/v1/join-tokens/${seg(id)}`, NONE),
  };
}
