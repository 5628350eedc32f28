// `llmgw ctl`'s calls to the control API: one function per endpoint, through the global fetch, every answer parsed
// with the schema the API answers with. Each call also returns the answer as sent (`raw`), which `--json` prints.

import type { Dispatcher } from "undici";
import { ApiKey, ApiKeyWithSecret } from "../../shared/schemas/api-key.js";
import { Deployment } from "../../shared/schemas/deployment.js";
import { Model } from "../../shared/schemas/model.js";
import { Node, NodeSummary } from "../../shared/schemas/node.js";
import { NvlinkView } from "../../shared/schemas/nvlink.js";
import { Capacity } from "../../shared/schemas/plan.js";
import { ReplicaLogs, ReplicaView } from "../../shared/schemas/replica.js";
import { AdminToken, CreatedAdminToken, CreatedJoinToken, JoinToken, type Role } from "../../shared/schemas/token.js";
import { z } from "../../shared/z.js";
import { type CallFailure, callJson } from "../client.js";
import { CtlError } from "./errors.js";

export type CtlClientOptions = { server: string; token: string; timeoutMs?: number; dispatcher?: Dispatcher };
export type CtlClient = ReturnType<typeof createCtlClient>;
export type Answer<T> = { status: number; data: T; raw: unknown; headers: Headers };

/** The declarative kinds: where they live and what they answer. */
export const DECLARED = {
  Model: { path: "models", what: "model", schema: Model },
  Deployment: { path: "deployments", what: "deployment", schema: Deployment },
  ApiKey: { path: "api-keys", what: "API key", schema: ApiKey },
} as const;
export type DeclaredKind = keyof typeof DECLARED;
type DeclaredOf = {
  Model: z.infer<typeof Model>;
  Deployment: z.infer<typeof Deployment>;
  ApiKey: z.infer<typeof ApiKey>;
};

const list = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item) });
const NONE = z.unknown();
const seg = encodeURIComponent;

/** What to do when the server's certificate was not trusted. */
const certHint = (why: string) =>
  /CERT|SIGNATURE|SELF_SIGNED|ERR_TLS/.test(why)
    ? " (the server's certificate is not trusted: pass --ca-file / LLMGW_CA_FILE with the CA that signed it)"
    : "";

/** ctl's wording of a failed call: the API's own detail when it refused, a hint when the answer makes no sense. */
function ctlError(f: CallFailure): CtlError {
  switch (f.kind) {
    case "unreachable":
      return new CtlError(0, `cannot reach ${f.base}: ${f.why}${certHint(f.why)}`, undefined, true);
    case "not_json":
      return new CtlError(
        f.status,
        `${f.what}: HTTP ${f.status} with a body that is not JSON (is ${f.base} an llmgw server?): ${f.text.slice(0, 120)}`,
      );
    case "refused":
      return f.problem
        ? new CtlError(f.status, f.problem.detail, f.problem)
        : new CtlError(f.status, `${f.what}: HTTP ${f.status}: ${f.text.slice(0, 200)}`);
    case "unexpected":
      return new CtlError(f.status, `${f.what}: unexpected answer (${f.issue}); is the server another version?`);
  }
}

/** A client of one control plane with one admin token. */
export function createCtlClient(o: CtlClientOptions) {
  const base = o.server.replace(/\/+$/, "");
  const call = <T extends z.ZodType>(
    method: string,
    path: string,
    schema: T,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer<z.infer<T>>> =>
    callJson(
      { base, method, path, token: o.token, body, headers, timeoutMs: o.timeoutMs ?? 30_000, dispatcher: o.dispatcher },
      schema,
      ctlError,
    );
  return {
    /** GET /api/v1/nodes, optionally filtered by state and pool. */
    listNodes: (q: { state?: string; pool?: string } = {}) => {
      const qs = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => !!e[1])).toString();
      return call("GET", `/api/v1/nodes${qs ? `?${qs}` : ""}`, list(NodeSummary));
    },
    /** GET /api/v1/nodes/{id}: devices, shards, inventory. */
    getNode: (id: string) => call("GET", `/api/v1/nodes/${seg(id)}`, Node),
    /** POST /api/v1/nodes/{id}/cordon|uncordon|drain. */
    nodeAction: (id: string, verb: "cordon" | "uncordon" | "drain") =>
      call("POST", `/api/v1/nodes/${seg(id)}/${verb}`, NodeSummary),
    /** DELETE /api/v1/nodes/{id}: forget a node. */
    deleteNode: (id: string) => call("DELETE", `/api/v1/nodes/${seg(id)}`, NONE),

    /** GET /api/v1/<kind>. */
    listDeclared: <K extends DeclaredKind>(kind: K) =>
      call("GET", `/api/v1/${DECLARED[kind].path}`, list(DECLARED[kind].schema)) as Promise<
        Answer<{ items: DeclaredOf[K][] }>
      >,
    /** GET /api/v1/<kind>/{name}. */
    getDeclared: <K extends DeclaredKind>(kind: K, name: string) =>
      call("GET", `/api/v1/${DECLARED[kind].path}/${seg(name)}`, DECLARED[kind].schema) as Promise<
        Answer<DeclaredOf[K]>
      >,
    /**
     * PUT /api/v1/<kind>/{name} with `{spec}`; 201 created, 200 replaced or unchanged. A created API key carries its
     * secret.
     */
    putDeclared: <K extends DeclaredKind>(kind: K, name: string, spec: unknown, headers: Record<string, string> = {}) =>
      call(
        "PUT",
        `/api/v1/${DECLARED[kind].path}/${seg(name)}`,
        kind === "ApiKey" ? ApiKeyWithSecret.partial({ secret: true }) : DECLARED[kind].schema,
        { spec },
        headers,
      ) as Promise<Answer<DeclaredOf[K] & { secret?: string }>>,
    /** DELETE /api/v1/<kind>/{name}. */
    deleteDeclared: (kind: DeclaredKind, name: string) =>
      call("DELETE", `/api/v1/${DECLARED[kind].path}/${seg(name)}`, NONE),
    /** POST /api/v1/api-keys/{name}/rotate: a new secret, shown once. */
    rotateApiKey: (name: string) => call("POST", `/api/v1/api-keys/${seg(name)}/rotate`, ApiKeyWithSecret),

    /** GET /api/v1/replicas, optionally of one deployment. */
    listReplicas: (deployment?: string) =>
      call("GET", `/api/v1/replicas${deployment ? `?deployment=${seg(deployment)}` : ""}`, list(ReplicaView)),
    /** GET /api/v1/replicas/{id}. */
    getReplica: (id: string) => call("GET", `/api/v1/replicas/${seg(id)}`, ReplicaView),
    /** GET /api/v1/replicas/{id}/logs: each shard's last failure with its log's last lines. */
    replicaLogs: (id: string) => call("GET", `/api/v1/replicas/${seg(id)}/logs`, ReplicaLogs),
    /** GET /api/v1/plan: devices by class and what more fits. */
    plan: () => call("GET", "/api/v1/plan", Capacity),
    /** GET /api/v1/nvlink: every multi-node NVLink domain, its trays and GPUs, and what keeps each tray out. */
    nvlink: () => call("GET", "/api/v1/nvlink", NvlinkView),

    /** GET /api/v1/tokens: admin tokens, never their secrets. */
    listAdminTokens: () => call("GET", "/api/v1/tokens", list(AdminToken)),
    /** POST /api/v1/tokens: a new admin token (the server's default role when none is given), shown once. */
    createAdminToken: (name: string, role?: Role) =>
      call("POST", "/api/v1/tokens", CreatedAdminToken, role ? { name, role } : { name }),
    /** DELETE /api/v1/tokens/{id}. */
    deleteAdminToken: (id: string) => call("DELETE", `/api/v1/tokens/${seg(id)}`, NONE),
    /** GET /api/v1/join-tokens. */
    listJoinTokens: () => call("GET", "/api/v1/join-tokens", list(JoinToken)),
    /** POST /api/v1/join-tokens: a new join token, shown once. */
    createJoinToken: (req: { name?: string; maxUses?: number; expiresInS?: number }) =>
      call("POST", "/api/v1/join-tokens", CreatedJoinToken, req),
    /** DELETE /api/v1/join-tokens/{id}. */
    deleteJoinToken: (id: string) => call("DELETE", `/api/v1/join-tokens/${seg(id)}`, NONE),
  };
}
