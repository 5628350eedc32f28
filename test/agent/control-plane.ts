// A fake control plane for msw: records every agent call and answers like the API, unless a test queues answers.
import { delay, HttpResponse, http, type JsonBodyType } from "msw";
import type { StartShard } from "../../shared/schemas/assignment.js";

export type Kind = "register" | "heartbeat" | "status" | "poll";
/** One call as it arrived: when, and how many polls were being held then (this one not counted). */
export type Call = {
  kind: Kind;
  auth: string | null;
  index: string | null;
  url: URL;
  body: unknown;
  at: number;
  pollsHeld: number;
};
type Answer = () => Response | Promise<Response>;

/** A problem+json answer as the API gives it. */
export const problem = (status: number, code: string, detail = code) =>
  HttpResponse.json(
    { type: `urn:llmgw:problem:${code}`, title: code, status, detail, code, requestId: "req_1" },
    { status, headers: { "content-type": "application/problem+json" } },
  );

/** The control plane at `base`: `handlers` go to msw's server.use. */
export function fakeControlPlane(base: string) {
  let tokens = 0;
  const cp = {
    calls: [] as Call[],
    /** One-shot answers per endpoint, used before the default one. */
    next: { register: [], heartbeat: [], status: [], poll: [] } as Record<Kind, Answer[]>,
    assignments: { index: 1, shards: [] as StartShard[] } as { index: number; shards: StartShard[] },
    /** How long a poll at the current index waits before answering (a short long-poll), at most its `wait`. */
    pollWaitMs: 10,
    /** The share of its `wait` a poll is held at most (the API answers after 90–100 % of it). */
    waitShare: 1,
    registration: { heartbeatIntervalS: 60, pollWaitS: 1, nodeLostAfterS: 180 },
    of: (kind: Kind) => cp.calls.filter((c) => c.kind === kind),
    handlers: [] as ReturnType<typeof http.post>[],
  };
  const ack = (nodeId: string) =>
    HttpResponse.json({ nodeId, receivedAt: Date.now(), heartbeatIntervalS: cp.registration.heartbeatIntervalS });
  let pollsHeld = 0;
  const record = async (kind: Kind, request: Request, fallback: (body: unknown) => Response | Promise<Response>) => {
    const body = request.method === "GET" ? undefined : await request.json();
    cp.calls.push({
      kind,
      auth: request.headers.get("authorization"),
      index: request.headers.get("x-llmgw-index"),
      url: new URL(request.url),
      body,
      at: Date.now(),
      pollsHeld,
    });
    const a = cp.next[kind].shift();
    return a ? a() : fallback(body);
  };
  cp.handlers = [
    http.post(`${base}/api/v1/agents/register`, ({ request }) =>
      record("register", request, (body) =>
        HttpResponse.json({
          nodeId: (body as { nodeId: string }).nodeId,
          nodeToken: `llmgw_node_${++tokens}`,
          ...cp.registration,
        }),
      ),
    ),
    http.post(`${base}/api/v1/agents/:node/heartbeat`, ({ request, params }) =>
      record("heartbeat", request, () => ack(params.node as string)),
    ),
    http.post(`${base}/api/v1/agents/:node/status`, ({ request, params }) =>
      record("status", request, () => ack(params.node as string)),
    ),
    http.get(`${base}/api/v1/agents/:node/assignments`, ({ request }) =>
      record("poll", request, async () => {
        const q = new URL(request.url).searchParams;
        if (Number(q.get("index")) === cp.assignments.index) {
          pollsHeld++;
          const wait = Number(q.get("wait") ?? 0) * 1000 * cp.waitShare;
          await delay(Math.min(cp.pollWaitMs, wait)).finally(() => pollsHeld--);
        }
        return HttpResponse.json(cp.assignments as unknown as JsonBodyType);
      }),
    ),
  ];
  return cp;
}
