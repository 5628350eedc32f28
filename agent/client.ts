// The agent's calls to the control plane: one function per endpoint, through the global fetch (so tests can
// intercept it with msw), every answer parsed with the schema the API validates with.
import type { Dispatcher } from "undici";
import { AgentAck, type Heartbeat, RegisterResponse, type RegisterRequestInput, type StatusReport } from "../shared/schemas/agent.js";
import { Assignments } from "../shared/schemas/assignment.js";
import { Problem } from "../shared/schemas/problem.js";
import { z } from "../shared/z.js";

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

export type ClientOptions = { server: string; dispatcher?: Dispatcher; timeoutMs?: number };
export type Client = ReturnType<typeof createClient>;

/** A client of one control plane; `token` is passed per call because registration can replace it. */
export function createClient(o: ClientOptions) {
  const base = o.server.replace(/\/+$/, "");
  async function call<T extends z.ZodType>(method: string, path: string, schema: T, token: string, body?: unknown, timeoutMs = o.timeoutMs ?? 30_000, signal?: AbortSignal): Promise<{ data: z.infer<T>; headers: Headers }> {
    const what = `${method} ${path}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        ...(o.dispatcher ? { dispatcher: o.dispatcher } : {}),
      } as RequestInit);
    } catch (e) {
      if (signal?.aborted) throw e;
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = timeout.aborted ? `no answer within ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e)));
      throw new ApiCallError(0, `${what}: cannot reach ${base}: ${why}`);
    }
    const text = await res.text().catch(() => "");
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new ApiCallError(res.ok ? 0 : res.status, `${what}: HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 120)}`);
    }
    if (!res.ok) {
      const p = Problem.safeParse(json);
      throw new ApiCallError(res.status, `${what}: HTTP ${res.status}: ${p.success ? p.data.detail ?? p.data.title : text.slice(0, 200)}`, p.success ? p.data.code : undefined);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw new ApiCallError(0, `${what}: unexpected answer (${i?.path.join(".") || "body"}: ${i?.message})`);
    }
    return { data: parsed.data, headers: res.headers };
  }

  return {
    /** Registers (or re-registers) the node; the answer carries the node token to use from now on. */
    register: async (req: RegisterRequestInput, token: string) => (await call("POST", "/api/v1/agents/register", RegisterResponse, token, req)).data,
    /** Reports what changed on the node. */
    heartbeat: async (nodeId: string, hb: Heartbeat, token: string) => (await call("POST", `/api/v1/agents/${encodeURIComponent(nodeId)}/heartbeat`, AgentAck, token, hb)).data,
    /** Reports shard state transitions. */
    status: async (nodeId: string, report: StatusReport, token: string) => (await call("POST", `/api/v1/agents/${encodeURIComponent(nodeId)}/status`, AgentAck, token, report)).data,
    /** Long-polls for the node's full desired shard set; the request may take `waitS` plus a margin. */
    poll: async (nodeId: string, index: number, waitS: number, token: string, signal?: AbortSignal) =>
      (await call("GET", `/api/v1/agents/${encodeURIComponent(nodeId)}/assignments?index=${index}&wait=${waitS}`, Assignments, token, undefined, (waitS + 15) * 1000, signal)).data,
  };
}
