// The fair queue as both routers wire it — the node:http handler of `llmgw serve` and the fetch router of the Worker —
// over an upstream the test answers by hand and the queue's own manual clock: the 429 a waiter gets on its deadline,
// a client that leaves while queued, and slots released on every way a request ends.
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cancel, UpstreamResponse } from "../../api/router/failures.js";
import type { ApiKeyInfo } from "../../api/router/types.js";
import { manualTimers } from "../helpers/fair-clock.js";
import { until } from "../helpers/process.js";
import {
  BOTH_ROUTERS,
  closeRouterServers,
  nodeRouter,
  oneReplicaDeps,
  type RouterCall,
} from "../helpers/router-deps.js";

const KEYS: Record<string, ApiKeyInfo> = {
  llmgw_key_one: { id: "one@1", name: "one", maxConcurrent: 1 },
  llmgw_key_other: { id: "other@1", name: "other" },
};
type Call = { answer(): void; fail(): void; signal: Cancel };

/** Router deps with one replica of `m` and an upstream whose calls wait until the test answers or fails them. */
function deps() {
  const clock = manualTimers();
  const registry = new Registry();
  const calls: Call[] = [];
  const response = (): UpstreamResponse => {
    const bytes = new TextEncoder().encode('{"ok":true}');
    return {
      status: 200,
      headers: { "content-type": "application/json" },
      body: Object.assign(
        (async function* () {
          yield bytes;
        })(),
        { destroy() {} },
      ),
    };
  };
  const r = oneReplicaDeps({
    identify: async (secret) => KEYS[secret],
    now: clock.now,
    setTimer: clock.setTimer,
    registry,
    maxInflightPerReplica: 2,
    send: (_url, _path, _body, _headers, signal) =>
      new Promise((ok, ko) => {
        signal.once("abort", () => ko(Object.assign(new Error("aborted"), { code: "UND_ERR_ABORTED" })));
        calls.push({ answer: () => ok(response()), fail: () => ko(new Error("reset")), signal });
      }),
  });
  const sample = async (name: string) =>
    (await registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.model === "m" || !v.labels.model);
  return { r, clock, calls, registry, sample };
}

type Send = (key: string, signal?: AbortSignal) => Promise<Response>;
/** The status of a response, read to its end (the fetch router closes a request's books when its body ends). */
const done = async (r: Promise<Response>) => {
  const res = await r;
  await res.text();
  return res.status;
};

afterAll(closeRouterServers);

/** A completion from key `key` to `router`. */
const sender =
  (router: RouterCall): Send =>
  (key, signal) =>
    router("/v1/completions", request(key, signal));

const request = (key: string, signal?: AbortSignal): RequestInit => ({
  method: "POST",
  headers: { authorization: `Bearer llmgw_key_${key}`, "content-type": "application/json" },
  body: JSON.stringify({ model: "m", prompt: "x" }),
  ...(signal ? { signal } : {}),
});

describe.each(BOTH_ROUTERS)("fair sharing through %s", (_, make) => {
  let d: ReturnType<typeof deps>;
  let send: Send;
  beforeAll(async () => {
    d = deps();
    send = sender(await make(d.r));
  });
  const q = () => d.r.fairQueue;

  it("answers a request that waited past the deadline 429 with Retry-After, in OpenAI's error shape", async () => {
    const held = send("one");
    await until(async () => d.calls.length === 1, 5000, "the first request upstream");
    const waiting = send("one");
    await until(async () => q().waiting("m") === 1, 5000, "the second request queued");
    expect((await d.sample("llmgw_router_queue_depth"))?.value).toBe(1);
    d.clock.advance(30_000);
    const r = await waiting;
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("1");
    const body = (await r.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: "rate_limit_error", code: "queue_timeout" });
    expect(body.error.message).toMatch(/API key one has 1 requests in flight \(its maxConcurrent\); .* waited 30 s/);
    expect((await d.sample("llmgw_router_queue_depth"))?.value).toBe(0);
    expect((await d.registry.getSingleMetric("llmgw_router_requests_total")?.get())?.values).toContainEqual(
      expect.objectContaining({ labels: { model: "m", code: "429" }, value: 1 }),
    );
    d.calls.shift()!.answer();
    expect(await done(held)).toBe(200);
    await until(async () => q().active() === 0, 5000, "the slot released");
  });

  it("takes a request whose client went away out of the queue; the slot goes to the next one", async () => {
    const held = send("other");
    const held2 = send("other");
    await until(async () => d.calls.length === 2, 5000, "two requests upstream");
    const ac = new AbortController();
    const gone = send("other", ac.signal).then(
      (r) => r.status,
      () => "gone",
    );
    const next = send("one");
    await until(async () => q().waiting("m") === 2, 5000, "two requests queued");
    ac.abort();
    await until(async () => q().waiting("m") === 1, 5000, "the aborted one to leave");
    // the Node client sees its own abort; the fetch router, called in-process, answers a response nobody reads
    expect(await gone).toBe(make === nodeRouter ? "gone" : 502);
    d.calls.shift()!.answer();
    expect(await done(held)).toBe(200);
    await until(async () => d.calls.length === 2, 5000, "the next one upstream");
    for (const c of d.calls.splice(0)) c.answer();
    expect([await done(held2), await done(next)]).toEqual([200, 200]);
    await until(async () => q().active() === 0 && q().waiting() === 0, 5000, "every slot released");
  });

  it("releases the slot when the replica fails and when the client leaves mid-request", async () => {
    const failing = send("one");
    await until(async () => d.calls.length === 1, 5000, "the request upstream");
    d.calls.shift()!.fail();
    expect(await done(failing)).toBe(502);
    expect(q().active()).toBe(0);
    const ac = new AbortController();
    const leaving = send("one", ac.signal);
    await until(async () => d.calls.length === 1, 5000, "the request upstream");
    const call = d.calls.shift()!;
    if (make === nodeRouter) {
      // the router sees the socket close and aborts the engine's call
      ac.abort();
      await expect(leaving).rejects.toThrow();
      await until(async () => call.signal.aborted, 5000, "the engine's call aborted");
    } else {
      // the response has begun; the client cancels its body
      call.answer();
      await (await leaving).body!.cancel();
    }
    await until(async () => q().active() === 0, 5000, "the slot released");
    expect(d.r.balancer.outstanding().size).toBe(0);
  });
});
