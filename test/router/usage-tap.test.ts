import { describe, expect, it } from "vitest";
import type { Usage } from "../../api/router/types.js";
import { jsonTap, sseTap, type Tap, usageOf } from "../../api/router/usage-tap.js";

const enc = new TextEncoder();
const dec = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const MiB = 1024 * 1024;

/** Feeds `chunks` through `tap`: what came out for each chunk, what `end()` gave, and all of it joined. */
function run(tap: Tap, chunks: (string | Uint8Array)[]) {
  const outs = chunks.map((c) => tap.chunk(typeof c === "string" ? enc.encode(c) : c));
  const end = tap.end();
  const all = Buffer.concat([...outs, end.rest]);
  return { outs: outs.map(dec), rest: dec(end.rest), all, usage: end.usage };
}

/** `bytes` cut into pieces of `size` bytes (so multi-byte characters and event ends fall anywhere). */
const pieces = (bytes: Uint8Array, size: number) =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

const u = (promptTokens: number, completionTokens: number): Usage => ({ promptTokens, completionTokens });

describe("usageOf", () => {
  it.each<[string, unknown, Usage | undefined]>([
    ["chat/completions usage", { usage: { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46 } }, u(12, 34)],
    ["Responses API usage", { usage: { input_tokens: 7, output_tokens: 9, total_tokens: 16 } }, u(7, 9)],
    ["prompt tokens only (embeddings)", { usage: { prompt_tokens: 5, total_tokens: 5 } }, u(5, 0)],
    ["zero tokens", { usage: { prompt_tokens: 0, completion_tokens: 0 } }, u(0, 0)],
    ["fractions rounded", { usage: { prompt_tokens: 2.4, completion_tokens: 2.6 } }, u(2, 3)],
    ["negative counts → 0", { usage: { prompt_tokens: -3, completion_tokens: -1 } }, u(0, 0)],
    [
      "NaN and Infinity → 0",
      { usage: { prompt_tokens: Number.NaN, completion_tokens: Number.POSITIVE_INFINITY } },
      u(0, 0),
    ],
    ["counts as strings → 0", { usage: { prompt_tokens: "12", completion_tokens: "3" } }, u(0, 0)],
    [
      "null counts fall back to the Responses names",
      { usage: { prompt_tokens: null, input_tokens: 4, completion_tokens: null, output_tokens: 6 } },
      u(4, 6),
    ],
    ["no usage", { id: "x", choices: [] }, undefined],
    ["usage: null (a stream chunk before the last)", { usage: null }, undefined],
    ["usage is a string", { usage: "lots" }, undefined],
    ["usage is a number", { usage: 42 }, undefined],
    ["null", null, undefined],
    ["undefined", undefined, undefined],
    ["a string", "usage", undefined],
    ["a number", 3, undefined],
  ])("%s", (_, x, want) => {
    expect(usageOf(x)).toEqual(want);
  });
});

describe("jsonTap", () => {
  const body = JSON.stringify({
    id: "chatcmpl-1",
    choices: [{ message: { content: "héllo 🦙" } }],
    usage: { prompt_tokens: 3, completion_tokens: 4 },
  });

  it("passes every chunk through unchanged and reads usage at the end", () => {
    const tap = jsonTap();
    const bytes = enc.encode(body);
    for (const p of pieces(bytes, 7)) expect(tap.chunk(p)).toBe(p);
    const end = tap.end();
    expect(end.rest.length).toBe(0);
    expect(end.usage).toEqual(u(3, 4));
  });

  it.each([
    ["one chunk", [body]],
    ["split inside a multi-byte character", pieces(enc.encode(body), 1)],
    ["empty chunks among them", ["", body.slice(0, 10), "", body.slice(10), ""]],
  ])("reads usage from %s", (_, chunks) => {
    const r = run(jsonTap(), chunks);
    expect(r.usage).toEqual(u(3, 4));
    expect(r.all.toString("utf8")).toBe(body);
  });

  it.each([
    [
      "usage with nested details",
      { id: "x", usage: { prompt_tokens: 3, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 1 } } },
      u(3, 4),
    ],
    [
      "usage before other keys",
      { usage: { prompt_tokens: 5, completion_tokens: 6 }, choices: [{ message: { content: "x".repeat(5000) } }] },
      u(5, 6),
    ],
    [
      "content that quotes a usage object",
      {
        choices: [{ message: { content: 'say "usage": {"prompt_tokens": 999}' } }],
        usage: { prompt_tokens: 1, completion_tokens: 2 },
      },
      u(1, 2),
    ],
    [
      "strings with braces and escapes inside usage",
      { usage: { note: '}{"\\', prompt_tokens: 7, completion_tokens: 8 } },
      u(7, 8),
    ],
    [
      "content full of the letters of its key",
      {
        choices: [{ message: { content: 'gg"usage g"usag"e"\\"usage"g usage"' } }],
        usage: { prompt_tokens: 11, completion_tokens: 12 },
      },
      u(11, 12),
    ],
    [
      "usage: null, content quoting one",
      { choices: [{ message: { content: '"usage":{"prompt_tokens":9}' } }], usage: null },
      undefined,
    ],
  ])("reads the usage object only: %s", (_, obj, want) => {
    const r = run(jsonTap(), pieces(enc.encode(JSON.stringify(obj)), 100));
    expect(r.usage).toEqual(want);
  });

  it.each([
    ["not JSON", ["<html>bad gateway</html>"]],
    ["truncated JSON", [body.slice(0, -5)]],
    ["JSON without usage", [JSON.stringify({ error: { message: "nope" } })]],
    ["JSON null", ["null"]],
    ["nothing", []],
  ])("no usage for %s, bytes still pass", (_, chunks) => {
    const r = run(jsonTap(), chunks);
    expect(r.usage).toBeUndefined();
    expect(r.all.toString("utf8")).toBe(chunks.join(""));
  });

  /** A JSON body with usage, padded to exactly `size` bytes. */
  const padded = (size: number) => {
    const head = '{"usage":{"prompt_tokens":1,"completion_tokens":2},"pad":"';
    return enc.encode(`${head + "x".repeat(size - head.length - 2)}"}`);
  };

  it("reads usage from a body of exactly 4 MiB", () => {
    const bytes = padded(4 * MiB);
    expect(bytes.length).toBe(4 * MiB);
    const tap = jsonTap();
    for (const p of pieces(bytes, 64 * 1024)) expect(tap.chunk(p)).toBe(p);
    expect(tap.end().usage).toEqual(u(1, 2));
  });

  it.each([
    ["one byte over", 4 * MiB + 1],
    ["far over", 6 * MiB],
  ])("gives no usage for a body over the 4 MiB cap (%s) but passes every byte", (_, size) => {
    const bytes = padded(size);
    const tap = jsonTap();
    const out: Uint8Array[] = [];
    for (const p of pieces(bytes, 1024 * 1024)) {
      const o = tap.chunk(p);
      expect(o).toBe(p);
      out.push(o);
    }
    const end = tap.end();
    expect(end.usage).toBeUndefined();
    expect(Buffer.concat([...out, end.rest]).equals(Buffer.from(bytes))).toBe(true);
  });
});

describe("sseTap", () => {
  const ev = (obj: unknown) => `data: ${JSON.stringify(obj)}\n\n`;
  const chunk = (content: string, usage: unknown = null) =>
    ev({
      id: "c1",
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta: { content }, finish_reason: null }],
      usage,
    });
  const usageOnly = ev({
    id: "c1",
    object: "chat.completion.chunk",
    choices: [],
    usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
  });
  const DONE = "data: [DONE]\n\n";
  const stream = [chunk("Hel"), chunk("lo, "), chunk("wörld 🦙"), usageOnly, DONE];
  const full = stream.join("");
  const withoutUsage = [chunk("Hel"), chunk("lo, "), chunk("wörld 🦙"), DONE].join("");

  it("passes each complete event on as soon as it arrives", () => {
    const r = run(sseTap(false), stream);
    expect(r.outs).toEqual(stream);
    expect(r.rest).toBe("");
  });

  it("holds an event split across two chunks until it is complete, then passes it whole", () => {
    const a = chunk("one");
    const b = chunk("two");
    const r = run(sseTap(false), [a + b.slice(0, 12), b.slice(12, 30), b.slice(30)]);
    expect(r.outs).toEqual([a, "", b]);
  });

  it("holds an event whose blank line is split across chunks", () => {
    const a = chunk("one");
    const r = run(sseTap(false), [a.slice(0, -1), "\n"]);
    expect(r.outs).toEqual(["", a]);
  });

  it("passes several events from one chunk together", () => {
    const r = run(sseTap(false), [chunk("a") + chunk("b") + chunk("c").slice(0, 5), chunk("c").slice(5)]);
    expect(r.outs).toEqual([chunk("a") + chunk("b"), chunk("c")]);
  });

  it("reports the usage of the last event that carries one", () => {
    const r = run(sseTap(false), [
      chunk("a", { prompt_tokens: 10, completion_tokens: 1 }),
      chunk("b", { prompt_tokens: 10, completion_tokens: 2 }),
      chunk("c"),
      DONE,
    ]);
    expect(r.usage).toEqual(u(10, 2));
  });

  it("finds the usage event among content full of its key's letters, split at every byte", () => {
    const noisy = [chunk('g"usage" gg'), chunk('"usag g"'), usageOnly, DONE];
    const bytes = enc.encode(noisy.join(""));
    const r = run(sseTap(true), pieces(bytes, 1));
    expect(r.usage).toEqual(u(10, 3));
    expect(r.all.toString("utf8")).toBe([noisy[0], noisy[1], DONE].join(""));
  });

  it("reports no usage for a stream without any", () => {
    expect(run(sseTap(true), [chunk("a"), chunk("b"), DONE]).usage).toBeUndefined();
  });

  it("reads the Responses API's usage from response.completed", () => {
    const events = [
      `event: response.created\ndata: ${JSON.stringify({ type: "response.created", response: { id: "resp_1", usage: null } })}\n\n`,
      `event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", delta: "hi" })}\n\n`,
      `event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", response: { id: "resp_1", usage: { input_tokens: 8, output_tokens: 2, total_tokens: 10 } } })}\n\n`,
    ];
    const r = run(sseTap(true), events);
    expect(r.usage).toEqual(u(8, 2));
    expect(r.all.toString("utf8")).toBe(events.join(""));
  });

  it.each([1, 2, 3, 5, 7, 16, 64, 1000, 100_000])(
    "dropUsageEvent: removes the usage-only event and keeps every other byte (chunks of %i bytes)",
    (size) => {
      const r = run(sseTap(true), pieces(enc.encode(full), size));
      expect(r.all.toString("utf8")).toBe(withoutUsage);
      expect(r.usage).toEqual(u(10, 3));
    },
  );

  it.each([1, 2, 3, 5, 7, 16, 64, 1000, 100_000])(
    "without dropUsageEvent the stream passes byte for byte (chunks of %i bytes)",
    (size) => {
      const bytes = enc.encode(full);
      const r = run(sseTap(false), pieces(bytes, size));
      expect(r.all.equals(Buffer.from(bytes))).toBe(true);
      expect(r.usage).toEqual(u(10, 3));
    },
  );

  it("dropUsageEvent keeps usage that rides on a chunk with choices (continuous usage stats)", () => {
    const events = [
      chunk("a", { prompt_tokens: 4, completion_tokens: 1 }),
      chunk("b", { prompt_tokens: 4, completion_tokens: 2 }),
      DONE,
    ];
    const r = run(sseTap(true), events);
    expect(r.outs).toEqual(events);
    expect(r.usage).toEqual(u(4, 2));
  });

  it("dropUsageEvent passes the events around the dropped one in the same chunk", () => {
    const r = run(sseTap(true), [chunk("z") + usageOnly + DONE]);
    expect(r.outs).toEqual([chunk("z") + DONE]);
  });

  it("dropUsageEvent drops only the usage-only event when several events carry usage in one chunk", () => {
    const quoting = chunk('the "usage": {"prompt_tokens": 1} key', { prompt_tokens: 10, completion_tokens: 2 });
    const r = run(sseTap(true), [quoting + chunk("x", { prompt_tokens: 10, completion_tokens: 3 }) + usageOnly + DONE]);
    expect(r.outs).toEqual([quoting + chunk("x", { prompt_tokens: 10, completion_tokens: 3 }) + DONE]);
    expect(r.usage).toEqual(u(10, 3));
  });

  it("passes data: [DONE], comments and unparsable events", () => {
    const events = [": keep-alive\n\n", 'data: {"usage": oops\n\n', "event: ping\ndata: {}\n\n", DONE];
    const r = run(sseTap(true), events);
    expect(r.outs).toEqual(events);
    expect(r.usage).toBeUndefined();
  });

  it("multi-byte characters split at every byte survive", () => {
    const text = "ä 日本語 🦙🦙 é\u0301";
    const events = [chunk(text), chunk(text.repeat(3)), DONE];
    const bytes = enc.encode(events.join(""));
    for (const size of [1, 2, 3, 4, 5]) {
      const r = run(sseTap(false), pieces(bytes, size));
      expect(r.all.equals(Buffer.from(bytes))).toBe(true);
    }
    // cut in the middle of the 4-byte 🦙: nothing of the event comes out until its end
    const at = Buffer.from(bytes).indexOf(Buffer.from("🦙")) + 2;
    const r = run(sseTap(false), [bytes.subarray(0, at), bytes.subarray(at)]);
    expect(r.outs[0]).toBe("");
    expect(r.all.equals(Buffer.from(bytes))).toBe(true);
  });

  it("passes an unterminated last event at the end, and reads its usage", () => {
    const last = `data: ${JSON.stringify({ choices: [{ delta: {} }], usage: { prompt_tokens: 1, completion_tokens: 1 } })}`;
    const r = run(sseTap(false), [chunk("a"), last]);
    expect(r.outs).toEqual([chunk("a"), ""]);
    expect(r.rest).toBe(last);
    expect(r.usage).toEqual(u(1, 1));
  });
});
