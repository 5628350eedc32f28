// The agent's calls to the control plane: one function per endpoint, through the global fetch (so tests can
// intercept it with msw), every answer parsed with the schema the API validates with.
import type { Dispatcher } from "undici";
import {
  AgentAck,
  type Heartbeat,
  type RegisterRequestInput,
  RegisterResponse,
  RouterInflight,
  type StatusReport,
} from "../shared/schemas/agent.js";
import { Assignments, StartShard } from "../shared/schemas/assignment.js";
import { Problem } from "../shared/schemas/problem.js";
import { z } from "../shared/z.js";

/** Seconds a long-poll may take past its wait before the client gives up on it. */
export const POLL_MARGIN_S = 15;

/** A call the control plane refused or answered badly; `status` 0 when it could not be reached or made no sense. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Why a JSON call failed, for each client to word as its users expect. */
export type CallFailure = { what: string; base: string } & (
  | { kind: "unreachable"; why: string }
  | { kind: "not_json"; status: number; text: string }
  | { kind: "refused"; status: number; problem?: Problem; text: string }
  | { kind: "unexpected"; status: number; issue: string }
);

export type JsonCall = {
  base: string;
  method: string;
  path: string;
  token: string;
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  dispatcher?: Dispatcher;
};

/**
 * One call to the control API with a bearer token and a JSON body, through the global fetch: the answer parsed with
 * `schema`, every failure (unreachable, timed out, not JSON, refused with problem+json, an unexpected shape) handed to
 * `fail`, which says what to throw. An abort by `signal` is rethrown as it came.
 */
export async function callJson<T extends z.ZodType>(c: JsonCall, schema: T, fail: (f: CallFailure) => Error) {
  const what = `${c.method} ${c.path}`;
  const at = { what, base: c.base };
  const timeout = AbortSignal.timeout(c.timeoutMs);
  let res: Response;
  try {
    res = await fetch(`${c.base}${c.path}`, {
      method: c.method,
      headers: {
        authorization: `Bearer ${c.token}`,
        accept: "application/json",
        ...(c.body === undefined ? {} : { "content-type": "application/json" }),
        ...c.headers,
      },
      body: c.body === undefined ? undefined : JSON.stringify(c.body),
      signal: c.signal ? AbortSignal.any([c.signal, timeout]) : timeout,
      ...(c.dispatcher ? { dispatcher: c.dispatcher } : {}),
    } as RequestInit);
  } catch (e) {
    if (c.signal?.aborted) throw e;
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = timeout.aborted
      ? `no answer within ${c.timeoutMs} ms`
      : (cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e)));
    throw fail({ ...at, kind: "unreachable", why });
  }
  // a network error as a Response (Response.error(): status 0), which some fetch implementations hand back
  if (res.type === "error" || res.status === 0) throw fail({ ...at, kind: "unreachable", why: "network error" });
  const text = await res.text().catch(() => "");
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    throw fail({ ...at, kind: "not_json", status: res.status, text });
  }
  if (!res.ok) {
    const p = Problem.safeParse(json);
    throw fail({ ...at, kind: "refused", status: res.status, problem: p.success ? p.data : undefined, text });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw fail({
      ...at,
      kind: "unexpected",
      status: res.status,
      issue: `${i?.path.join(".") || "body"}: ${i?.message}`,
    });
  }
  return { status: res.status, data: parsed.data as z.infer<T>, raw: json, headers: res.headers };
}

/** The agent's wording of a failed call: every message starts with the call. */
function agentError(f: CallFailure): ApiCallError {
  switch (f.kind) {
    case "unreachable":
      return new ApiCallError(0, `${f.what}: cannot reach ${f.base}: ${f.why}`);
    case "not_json":
      return new ApiCallError(
        f.status >= 200 && f.status < 300 ? 0 : f.status,
        `${f.what}: HTTP ${f.status} with a body that is not JSON: ${f.text.slice(0, 120)}`,
      );
    case "refused":
      return new ApiCallError(
        f.status,
        `${f.what}: HTTP ${f.status}: ${f.problem ? (f.problem.detail ?? f.problem.title) : f.text.slice(0, 200)}`,
        f.problem?.code,
      );
    case "unexpected":
      return new ApiCallError(0, `${f.what}: unexpected answer (${f.issue})`);
  }
}

/** A shard of an assignments answer the agent cannot use, and why; its ids when the answer gave ones a report can carry. */
export type RefusedShard = { shardId?: string; replicaId?: string; reason: string };

/** The answer with each shard read on its own, so that one bad shard is refused alone, not the whole answer. */
const AssignmentsAnswer = Assignments.extend({ shards: z.array(z.unknown()) });
const ReportableId = z.string().min(1).max(64);

/** Splits the shards of an answer into those the agent can start and those it refuses (each with its reason). */
export function readShards(raw: readonly unknown[]): { shards: StartShard[]; refused: RefusedShard[] } {
  const shards: StartShard[] = [];
  const refused: RefusedShard[] = [];
  const taken = new Set<string>();
  raw.forEach((item, i) => {
    const fields = (item !== null && typeof item === "object" ? item : {}) as Record<string, unknown>;
    const ids = {
      ...(ReportableId.safeParse(fields.shardId).success ? { shardId: fields.shardId as string } : {}),
      ...(ReportableId.safeParse(fields.replicaId).success ? { replicaId: fields.replicaId as string } : {}),
    };
    const parsed = StartShard.safeParse(item);
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 3).map((x) => `${x.path.join(".") || "shard"}: ${x.message}`);
      refused.push({ ...ids, reason: `unusable assignment (shards.${i}): ${issues.join("; ")}` });
    } else if (taken.has(parsed.data.shardId)) {
      // the first one runs: reporting this one failed would name the shard that runs
      refused.push({
        reason: `shard id ${parsed.data.shardId} is in the answer twice (shards.${i}): the first is used`,
      });
    } else {
      taken.add(parsed.data.shardId);
      shards.push(parsed.data);
    }
  });
  return { shards, refused };
}

export type ClientOptions = { server: string; dispatcher?: Dispatcher; timeoutMs?: number };
export type Client = ReturnType<typeof createClient>;

/** A client of one control plane; `token` is passed per call because registration can replace it. */
export function createClient(o: ClientOptions) {
  const base = o.server.replace(/\/+$/, "");
  // the last assignment index the control plane gave: sent with every report, so that one restored from an older
  // backup answers 409 state_behind before it acts on the report (and places onto this node's engines)
  let seen = 0;
  const call = <T extends z.ZodType>(
    method: string,
    path: string,
    schema: T,
    token: string,
    body?: unknown,
    timeoutMs = o.timeoutMs ?? 30_000,
    signal?: AbortSignal,
  ) =>
    callJson(
      {
        base,
        method,
        path,
        token,
        body,
        timeoutMs,
        signal,
        dispatcher: o.dispatcher,
        ...(seen && !path.endsWith("/register") ? { headers: { "x-llmgw-index": String(seen) } } : {}),
      },
      schema,
      agentError,
    );

  return {
    /** Registers (or re-registers) the node; the answer carries the node token to use from now on. */
    register: async (req: RegisterRequestInput, token: string) =>
      (await call("POST", "/api/v1/agents/register", RegisterResponse, token, req)).data,
    /** Reports what changed on the node. */
    heartbeat: async (nodeId: string, hb: Heartbeat, token: string) =>
      (await call("POST", `/api/v1/agents/${encodeURIComponent(nodeId)}/heartbeat`, AgentAck, token, hb)).data,
    /** Reports shard state transitions. */
    status: async (nodeId: string, report: StatusReport, token: string) =>
      (await call("POST", `/api/v1/agents/${encodeURIComponent(nodeId)}/status`, AgentAck, token, report)).data,
    /**
     * Long-polls for the node's full desired shard set; the request may take `waitS` plus a margin. Shards it cannot
     * use are in `refused`, with why; the rest are in `shards`.
     */
    poll: async (nodeId: string, index: number, waitS: number, token: string, signal?: AbortSignal) => {
      const a = (
        await call(
          "GET",
          `/api/v1/agents/${encodeURIComponent(nodeId)}/assignments?index=${index}&wait=${waitS}`,
          AssignmentsAnswer,
          token,
          undefined,
          (waitS + POLL_MARGIN_S) * 1000,
          signal,
        )
      ).data;
      seen = a.index;
      return { index: a.index, ...readShards(a.shards) };
    },
    /** The router's count of requests outstanding to this node's engine on `port` (null: no router there). */
    routerInflight: async (nodeId: string, port: number, token: string) =>
      (
        await call(
          "GET",
          `/api/v1/agents/${encodeURIComponent(nodeId)}/inflight?port=${port}`,
          RouterInflight,
          token,
          undefined,
          5000,
        )
      ).data.inflight,
    /** Forgets the last assignment index (the control plane's state is older): the next calls send none. */
    forgetIndex() {
      seen = 0;
    },
  };
}
