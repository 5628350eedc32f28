// How both routers — the node:http handler of `llmgw serve` and the fetch router of the Worker — relay an engine's
// response: the prompts sent and whose responses have not begun, counted for `routing: prefix`'s queue bound (a
// request's own characters from its dispatch to its response's first byte, none after it, none once it ended); and a
// large response written through the socket's back-pressure without a listener left behind per wait.
import { afterAll, describe, expect, it } from "vitest";
import type { UpstreamResponse } from "../../api/router/failures.js";
import { ownChars } from "../../api/router/prompt-text.js";
import { until } from "../helpers/process.js";
import { BOTH_ROUTERS, closeRouterServers, ENDPOINT, oneReplicaDeps, type RouterCall } from "../helpers/router-deps.js";

const PATH = "/v1/chat/completions";
const BODY = {
  model: "m",
  stream: true,
  messages: [
    { role: "system", content: "You answer questions about the attached report. ".repeat(20) },
    { role: "user", content: "Here is the report: ".padEnd(5000, "x") },
  ],
};

/** A gate the test opens: the engine's next SSE event waits for it. */
type Gate = { open(): void; wait: Promise<void> };
const gate = (): Gate => {
  let open = () => {};
  const wait = new Promise<void>((ok) => (open = ok));
  return { open, wait };
};

/** Router deps with one replica of `m` (routed by prefix, the default) that answers with `body`'s chunks. */
function deps(body: () => AsyncGenerator<Uint8Array>, contentType = "text/event-stream") {
  let calls = 0;
  const response = (): UpstreamResponse => ({
    status: 200,
    headers: { "content-type": contentType },
    body: Object.assign(body(), { destroy() {} }),
  });
  const r = oneReplicaDeps({
    identify: async (secret) => (secret === "llmgw_key_one" ? { id: "one@1", name: "one" } : undefined),
    maxInflightPerReplica: 4,
    send: async () => {
      calls++;
      return response();
    },
  });
  return { r, calls: () => calls };
}

/** An SSE stream of one event, then the end, each waiting for its gate. */
function gatedStream() {
  const gates = [gate(), gate()];
  const event = (text: string) =>
    new TextEncoder().encode(`data: ${JSON.stringify({ choices: [{ delta: { content: text } }] })}\n\n`);
  return {
    gates,
    body: async function* () {
      await gates[0]!.wait;
      yield event("first");
      await gates[1]!.wait;
      yield new TextEncoder().encode("data: [DONE]\n\n");
    },
  };
}

const init: RequestInit = {
  method: "POST",
  headers: { authorization: "Bearer llmgw_key_one", "content-type": "application/json" },
  body: JSON.stringify(BODY),
};

afterAll(closeRouterServers);

/** The test's request, sent to `router`. */
const sender = (router: RouterCall) => () => router(PATH, init);

describe.each(BOTH_ROUTERS)("relaying through %s", (_, make) => {
  it("counts a request's own characters until its first byte, and nothing after", async () => {
    const stream = gatedStream();
    const d = deps(stream.body);
    const send = sender(await make(d.r));
    const own = ownChars(PATH, BODY);
    expect(own).toBe(5000);
    // (the node handler sends its headers with the first event)
    const answered = send();
    await until(async () => d.calls() === 1, 5000, "the request upstream");
    expect(d.r.balancer.queued(ENDPOINT.url)).toBe(own);
    stream.gates[0]!.open();
    const reader = (await answered).body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain("first");
    await until(async () => d.r.balancer.queued(ENDPOINT.url) === 0, 5000, "the queue to drop the begun prompt");
    expect(d.r.balancer.inflight(ENDPOINT.url)).toBe(1);
    stream.gates[1]!.open();
    while (!(await reader.read()).done) {}
    await until(async () => d.r.balancer.inflight(ENDPOINT.url) === 0, 5000, "the request to end");
    expect(d.r.balancer.queued(ENDPOINT.url)).toBe(0);
  });

  it("writes a large response through back-pressure, leaving no listener behind per wait", async () => {
    const chunk = new Uint8Array(256 * 1024).fill(0x20);
    const d = deps(async function* () {
      for (let i = 0; i < 40; i++) yield chunk;
    }, "application/json");
    const send = sender(await make(d.r));
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const res = await send();
      expect((await res.arrayBuffer()).byteLength).toBe(40 * chunk.length);
      await until(async () => d.r.balancer.inflight(ENDPOINT.url) === 0, 5000, "the request to end");
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });
});
