// Reading token usage out of responses as they pass through, without holding them back: a JSON body's `usage`, or the
// last SSE event that carries one. When the router itself asked upstream for the usage event (the client streamed
// without `stream_options.include_usage`), that event is dropped so the client gets exactly what it asked for.
import type { Usage } from "./types.js";

const MAX_JSON_BYTES = 4 * 1024 * 1024;

/** A token count as reported: a finite number, not negative, rounded; anything else counts 0. */
const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);

/** `usage` of an OpenAI response object, in prompt/completion tokens (Responses API names included). */
export function usageOf(x: unknown): Usage | undefined {
  const u = (x as { usage?: Record<string, unknown> } | null)?.usage;
  if (!u || typeof u !== "object") return undefined;
  return { promptTokens: count(u.prompt_tokens ?? u.input_tokens), completionTokens: count(u.completion_tokens ?? u.output_tokens) };
}

export type Tap = {
  /** The bytes to pass on for one upstream chunk (the same chunk unless an event had to be dropped or held). */
  chunk(bytes: Uint8Array): Uint8Array;
  /** What is left to pass on at the end, and the usage seen. */
  end(): { rest: Uint8Array; usage: Usage | undefined };
};

const EMPTY = new Uint8Array();
const USAGE_KEY = Buffer.from('"usage"');
const BLANK_LINE = Buffer.from("\n\n");
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * Where the object after the `"usage"` key at `at` starts (its `{`), or -1 when the key is not followed by `:` and an
 * object. The bytes `"usage"` only occur as a key: inside a JSON string the quotes would be escaped.
 */
function usageObjectAfter(b: Uint8Array, at: number): number {
  let i = at + USAGE_KEY.length;
  while (isSpace(b[i])) i++;
  if (b[i++] !== 0x3a) return -1;
  while (isSpace(b[i])) i++;
  return b[i] === 0x7b ? i : -1;
}

/** True when `b` has a `"usage"` key whose value is an object. */
function hasUsageObject(b: Buffer): boolean {
  for (let at = b.indexOf(USAGE_KEY); at >= 0; at = b.indexOf(USAGE_KEY, at + 1)) if (usageObjectAfter(b, at) >= 0) return true;
  return false;
}

/** The end (one past the closing `}`) of the JSON object starting at `from`, strings and nesting minded; -1 if it does not end. */
function objectEnd(b: Uint8Array, from: number): number {
  let depth = 0;
  for (let i = from; i < b.length; i++) {
    const c = b[i];
    if (c === 0x22) {
      // a string: skip to its closing quote, over escapes
      for (i++; i < b.length && b[i] !== 0x22; i++) if (b[i] === 0x5c) i++;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * The usage object of a JSON body, read without parsing the whole body: the last `"usage"` key whose value is an
 * object, and only that object parsed (responses are often large; their usage comes last and is small).
 */
function usageInJson(b: Buffer): Usage | undefined {
  for (let at = b.lastIndexOf(USAGE_KEY); at >= 0; at = at > 0 ? b.lastIndexOf(USAGE_KEY, at - 1) : -1) {
    const start = usageObjectAfter(b, at);
    const end = start < 0 ? -1 : objectEnd(b, start);
    if (end < 0) continue;
    try {
      return usageOf({ usage: JSON.parse(b.toString("utf8", start, end)) as unknown });
    } catch {
      // not JSON after all: look further back
    }
  }
  return undefined;
}

/** A tap for a JSON body: passes bytes through and reads the usage object at the end (bodies up to a size). */
class JsonTap implements Tap {
  private parts: Uint8Array[] = [];
  private size = 0;
  chunk(b: Uint8Array) {
    if (this.size + b.length <= MAX_JSON_BYTES) this.parts.push(b);
    this.size += b.length;
    return b;
  }
  end() {
    let usage: Usage | undefined;
    if (this.size <= MAX_JSON_BYTES && this.parts.length) {
      const p = this.parts;
      usage = usageInJson(p.length === 1 ? Buffer.from(p[0]!.buffer, p[0]!.byteOffset, p[0]!.byteLength) : Buffer.concat(p, this.size));
    }
    return { rest: EMPTY, usage };
  }
}

/** A tap for a JSON body: passes bytes through and reads `usage` at the end. */
export const jsonTap = (): Tap => new JsonTap();

/** The data lines of one SSE event, joined. */
const dataOf = (event: string) => event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");

/**
 * A tap for an SSE stream: whole events pass on as soon as they are complete; `dropUsageEvent` removes the usage-only
 * event. Works on bytes: only events that carry a usage object are decoded (a chunk can end inside a character, never
 * inside the blank line that ends an event).
 */
class SseTap implements Tap {
  private pending: Buffer = Buffer.alloc(0);
  private usage: Usage | undefined;
  constructor(private readonly dropUsageEvent: boolean) {}

  /** Reads the usage of one event's text; false when it is the usage-only event to drop. */
  private see(event: string): boolean {
    try {
      const obj = JSON.parse(dataOf(event)) as { usage?: unknown; choices?: unknown[]; response?: unknown };
      const u = usageOf(obj) ?? usageOf(obj.response);
      if (u) this.usage = u;
      return !(this.dropUsageEvent && Array.isArray(obj.choices) && obj.choices.length === 0 && obj.usage);
    } catch {
      return true;
    }
  }

  /** Complete events, less a dropped one: only the events with a usage object in them are decoded. */
  private pass(events: Buffer): Uint8Array {
    let kept: Buffer[] | undefined;
    let copied = 0; // bytes before `copied` are in `kept`
    let seen = 0; // events before `seen` are read
    for (let at = events.indexOf(USAGE_KEY); at >= 0; at = events.indexOf(USAGE_KEY, at + 1)) {
      if (at < seen || usageObjectAfter(events, at) < 0) continue;
      const before = events.lastIndexOf(BLANK_LINE, at);
      const start = before < 0 ? 0 : before + 2;
      seen = events.indexOf(BLANK_LINE, at) + 2;
      if (this.see(events.toString("utf8", start, seen))) continue;
      (kept ??= []).push(events.subarray(copied, start));
      copied = seen;
    }
    if (!kept) return events;
    kept.push(events.subarray(copied));
    return Buffer.concat(kept);
  }

  chunk(b: Uint8Array): Uint8Array {
    const bytes = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    const n = bytes.length;
    // the usual chunk: whole events, nothing held back from before
    if (!this.pending.length && n >= 2 && bytes[n - 1] === 0x0a && bytes[n - 2] === 0x0a) return this.pass(bytes);
    const all = this.pending.length ? Buffer.concat([this.pending, bytes]) : bytes;
    const cut = all.lastIndexOf(BLANK_LINE);
    if (cut < 0) {
      this.pending = Buffer.from(all);
      return EMPTY;
    }
    this.pending = Buffer.from(all.subarray(cut + 2));
    return this.pass(all.subarray(0, cut + 2));
  }

  end() {
    const bytes = this.pending;
    const rest = bytes.toString("utf8");
    this.pending = Buffer.alloc(0);
    const keep = !rest.trim() || !hasUsageObject(bytes) || this.see(rest);
    return { rest: keep ? Buffer.from(rest) : EMPTY, usage: this.usage };
  }
}

/** A tap for an SSE stream; `dropUsageEvent`: remove the usage-only event (the router asked for it, not the client). */
export const sseTap = (dropUsageEvent: boolean): Tap => new SseTap(dropUsageEvent);
