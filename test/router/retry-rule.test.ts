// Which upstream failures the router sends to another replica: only those that prove the engine never received the
// request. Real sockets: an engine that resets after reading the whole request, one that resets before, one refusing.

import { EventEmitter } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { createBalancer } from "../../api/router/balancer.js";
import { createRouterMetrics } from "../../api/router/metrics.js";
import { dispatch } from "../../api/router/request.js";
import type { RouterDeps } from "../../api/router/types.js";
import { createUpstream } from "../../api/router/upstream.js";
import { refusingPort } from "../helpers/refusing-port.js";

const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((ok) => s.close(ok)))));

/** A TCP "engine" that calls `onRequest` with the socket once it has `bytes` bytes of the request. */
async function engine(onRequest: (s: Socket) => void, bytes: number) {
  const seen: number[] = [];
  const server = createServer((s) => {
    let got = 0;
    let called = false;
    s.on("data", (d) => {
      got += d.length;
      seen.push(d.length);
      if (got >= bytes && !called) {
        called = true;
        onRequest(s);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

/** An engine that answers every request 200 and counts them. */
async function healthy() {
  let count = 0;
  const e = await engine((s) => {
    count++;
    s.end("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}");
  }, 1);
  return { ...e, count: () => count };
}

const BODY = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(2000) }] });

async function send(first: string, second: string, body = BODY) {
  const r = {
    balancer: createBalancer({ now: Date.now, random: () => 0 }),
    upstream: createUpstream(),
    metrics: createRouterMetrics(new Registry()),
    maxAttempts: 3,
  } as unknown as RouterDeps;
  // the balancer's two random choices with random() = 0 pick the first endpoint while it is untried
  const endpoints = [first, second].map((url, i) => ({ replicaId: `r${i}`, deployment: "d", model: "m", url }));
  const slot = { released: 0, release: () => void slot.released++ };
  const sent = await dispatch(
    r,
    { model: "m", endpoints, body, injected: false },
    "/v1/chat/completions",
    {},
    undefined,
    new EventEmitter() as never,
    slot,
  );
  // the fair queue's slot: released by dispatch when no response came, else by `done` (with the replica's count)
  if ("res" in sent) {
    expect(slot.released).toBe(0);
    for await (const _ of sent.res.body);
    sent.done();
  }
  expect(slot.released).toBe(1);
  expect(r.balancer.outstanding().size).toBe(0);
  await r.upstream.close();
  return sent;
}

describe("the router's retry rule, on real sockets", () => {
  it("does not retry a reset that came after the whole request was written: the engine may be running it", async () => {
    const dead = await engine((s) => s.resetAndDestroy(), Buffer.byteLength(BODY));
    const other = await healthy();
    const sent = await send(dead.url, other.url);
    expect(sent).toMatchObject({ failed: "reset" });
    expect(other.count()).toBe(0);
  });

  it("retries a reset before the request was written, and a refused connection, on another replica", async () => {
    // 32 MiB cannot sit in the socket's buffers: the engine resets at its first bytes, while the rest is still unsent
    const early = await engine((s) => s.resetAndDestroy(), 1);
    const other = await healthy();
    const big = JSON.stringify({ model: "m", prompt: "x".repeat(32 << 20) });
    expect(await send(early.url, other.url, big)).toHaveProperty("res");
    expect(other.count()).toBe(1);
    const refused = `http://127.0.0.1:${await refusingPort()}`;
    expect(await send(refused, other.url)).toHaveProperty("res");
    expect(other.count()).toBe(2);
  });
});
