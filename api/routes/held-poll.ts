// A long-poll held outside Hono's request chain (Node, @hono/node-server): once a poll has to wait, its route hands
// the Node response to `holdAnswer` and returns. Every middleware's suspended frame, the request's Context and its
// closures (and the WHATWG Request that an abort signal from Hono would build) are then let go while the poll waits:
// what stays is the connection, a timer and the waiter — under half of what a poll held in the chain kept. At
// fleet size, with a poll held per agent, that was most of serve's live memory. The Worker holds no connection like
// this (it has no Node response) and waits in the chain.
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { problemBody, problemOf } from "../errors.js";
import type { Log } from "../log.js";

/** The Node response of a request (@hono/node-server's `c.env.outgoing`), as much of it as a held poll uses. */
export type Outgoing = {
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(body: Uint8Array): unknown;
  once(event: "close", listener: () => void): unknown;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
};

/** The Node response under a request, where there is one (not in the Worker, nor under `app.request`). */
export function outgoingOf(env: unknown): Outgoing | undefined {
  const out = (env as { outgoing?: Partial<Outgoing> } | undefined)?.outgoing;
  return typeof out?.writeHead === "function" && typeof out.once === "function" ? (out as Outgoing) : undefined;
}

/** A JSON answer: its status, headers and body. */
export type JsonAnswer = { status: number; headers?: Record<string, string>; json: unknown };

/** The status logged for a held poll whose client went away before it was answered (nginx counts it alike). */
export const CLIENT_GONE = 499;

const encoder = new TextEncoder();

/** Why a held poll's signal aborts: one reason for all (an abort without one makes a DOMException each time). */
const CLOSED = new Error("the client closed the connection");

function write(out: Outgoing, status: number, headers: Record<string, string>, body: string) {
  const bytes = encoder.encode(body);
  out.writeHead(status, { ...headers, "content-length": bytes.length });
  out.end(bytes);
}

/**
 * Answers on `out` with what `answer` resolves to, or its error as problem+json; `answer` is given a signal that aborts
 * when the client goes away (it need not read anything then). Resolves with the status written, `CLIENT_GONE` when
 * the client went away first. Returns the Response to give @hono/node-server: one that tells it the answer is written
 * here.
 */
export function holdAnswer(
  out: Outgoing,
  requestId: string,
  log: Log,
  answer: (gone: AbortSignal) => Promise<JsonAnswer>,
): { response: Response; answered: Promise<number> } {
  const gone = new AbortController();
  let settled = false;
  // a close after the answer (every answered poll's) aborts nothing: at fleet size an abort each, with its DOMException
  // and its event, was a tenth of the time serve took to answer the thousand polls a placement wakes
  out.once("close", () => settled || gone.abort(CLOSED));
  const answered = answer(gone.signal)
    .finally(() => {
      settled = true;
    })
    .then(
      (a) => {
        if (out.destroyed || out.writableEnded) return CLIENT_GONE;
        const headers = { "content-type": "application/json", "x-request-id": requestId, ...a.headers };
        write(out, a.status, headers, JSON.stringify(a.json));
        return a.status;
      },
      (e: unknown) => {
        const p = problemOf(e instanceof Error ? e : new Error(String(e)), requestId, log);
        if (out.destroyed || out.writableEnded) return CLIENT_GONE;
        const headers = { "content-type": "application/problem+json", "x-request-id": requestId, ...p.headers };
        write(out, p.status, headers, JSON.stringify(problemBody(p, requestId)));
        return p.status;
      },
    );
  // @hono/node-server's own marker, made before it replaced the global Response: one made now would be its cached
  // kind, which it writes out whatever its headers say
  return { response: RESPONSE_ALREADY_SENT, answered };
}
