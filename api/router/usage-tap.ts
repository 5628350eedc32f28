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
  return {
    promptTokens: count(u.prompt_tokens ?? u.input_tokens),
    completionTokens: count(u.completion_tokens ?? u.output_tokens),
  };
}

export type Tap = {
  /** The bytes to pass on for one upstream chunk (the same chunk unless an event had to be dropped or held). */
  chunk(bytes: Uint8Array): Uint8Array;
  /** What is left to pass on at the end, and the usage seen. */
  end(): { rest: Uint8Array; usage: Usage | undefined };
};

// Bytes as plain Uint8Arrays (no Buffer): the same tap runs on Node and in a Worker. The searches start on one byte of
// the needle with TypedArray indexOf/lastIndexOf, which are native: its `pivot`, a byte that is rare where it is
// searched for (the quotes of `"usage"` are the commonest byte of JSON; its `g` is rare: ~3× faster on a chat stream).
const EMPTY = new Uint8Array();
const encoder = new TextEncoder();
const decoder = new TextDecoder();
type Needle = { bytes: Uint8Array; pivot: number };
const USAGE_KEY: Needle = { bytes: encoder.encode('"usage"'), pivot: 4 };
const BLANK_LINE: Needle = { bytes: encoder.encode("\n\n"), pivot: 0 };
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** True when `needle` is at `at` in `b`. */
function startsAt(b: Uint8Array, needle: Uint8Array, at: number): boolean {
  if (at < 0 || at + needle.length > b.length) return false;
  for (let j = 0; j < needle.length; j++) if (b[at + j] !== needle[j]) return false;
  return true;
}

/** The first index at or after `from` where `needle` starts in `b`, or -1. */
function indexOfBytes(b: Uint8Array, { bytes, pivot }: Needle, from = 0): number {
  const key = bytes[pivot]!;
  for (let p = b.indexOf(key, from + pivot); p >= 0; p = b.indexOf(key, p + 1))
    if (startsAt(b, bytes, p - pivot)) return p - pivot;
  return -1;
}

/** The last index at or before `from` where `needle` starts in `b`, or -1. */
function lastIndexOfBytes(b: Uint8Array, { bytes, pivot }: Needle, from = b.length - 1): number {
  const key = bytes[pivot]!;
  for (let p = b.lastIndexOf(key, from + pivot); p >= pivot; p = p > 0 ? b.lastIndexOf(key, p - 1) : -1)
    if (startsAt(b, bytes, p - pivot)) return p - pivot;
  return -1;
}

/** `parts` joined into one array of `size` bytes (the only part itself when there is one). */
function concat(parts: Uint8Array[], size = parts.reduce((n, p) => n + p.length, 0)): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const text = (b: Uint8Array, start = 0, end = b.length) => decoder.decode(b.subarray(start, end));

/**
 * Where the object after the `"usage"` key at `at` starts (its `{`), or -1 when the key is not followed by `:` and an
 * object. The bytes `"usage"` only occur as a key: inside a JSON string the quotes would be escaped.
 */
function usageObjectAfter(b: Uint8Array, at: number): number {
  let i = at + USAGE_KEY.bytes.length;
  while (isSpace(b[i])) i++;
  if (b[i++] !== 0x3a) return -1;
  while (isSpace(b[i])) i++;
  return b[i] === 0x7b ? i : -1;
}

/** True when `b` has a `"usage"` key whose value is an object. */
function hasUsageObject(b: Uint8Array): boolean {
  for (let at = indexOfBytes(b, USAGE_KEY); at >= 0; at = indexOfBytes(b, USAGE_KEY, at + 1))
    if (usageObjectAfter(b, at) >= 0) return true;
  return false;
}

/**
 * The end (one past the closing `}`) of the JSON object starting at `from`, strings and nesting minded; -1 if it does
 * not end.
 */
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
function usageInJson(b: Uint8Array): Usage | undefined {
  for (let at = lastIndexOfBytes(b, USAGE_KEY); at >= 0; at = at > 0 ? lastIndexOfBytes(b, USAGE_KEY, at - 1) : -1) {
    const start = usageObjectAfter(b, at);
    const end = start < 0 ? -1 : objectEnd(b, start);
    if (end < 0) continue;
    try {
      return usageOf({ usage: JSON.parse(text(b, start, end)) as unknown });
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
    if (this.size <= MAX_JSON_BYTES && this.parts.length) usage = usageInJson(concat(this.parts, this.size));
    return { rest: EMPTY, usage };
  }
}

/** A tap for a JSON body: passes bytes through and reads `usage` at the end. */
export const jsonTap = (): Tap => new JsonTap();

/** The data lines of one SSE event, joined. */
const dataOf = (event: string) =>
  event
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trim())
    .join("\n");

/**
 * A tap for an SSE stream: whole events pass on as soon as they are complete; `dropUsageEvent` removes the usage-only
 * event. Works on bytes: only events that carry a usage object are decoded (a chunk can end inside a character, never
 * inside the blank line that ends an event).
 */
class SseTap implements Tap {
  private pending: Uint8Array = EMPTY;
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
  private pass(events: Uint8Array): Uint8Array {
    let kept: Uint8Array[] | undefined;
    let copied = 0; // bytes before `copied` are in `kept`
    let seen = 0; // events before `seen` are read
    for (let at = indexOfBytes(events, USAGE_KEY); at >= 0; at = indexOfBytes(events, USAGE_KEY, at + 1)) {
      if (at < seen || usageObjectAfter(events, at) < 0) continue;
      const before = lastIndexOfBytes(events, BLANK_LINE, at);
      const start = before < 0 ? 0 : before + 2;
      seen = indexOfBytes(events, BLANK_LINE, at) + 2;
      if (this.see(text(events, start, seen))) continue;
      (kept ??= []).push(events.subarray(copied, start));
      copied = seen;
    }
    if (!kept) return events;
    kept.push(events.subarray(copied));
    return concat(kept);
  }

  chunk(bytes: Uint8Array): Uint8Array {
    const n = bytes.length;
    // the usual chunk: whole events, nothing held back from before
    if (!this.pending.length && n >= 2 && bytes[n - 1] === 0x0a && bytes[n - 2] === 0x0a) return this.pass(bytes);
    const all = this.pending.length ? concat([this.pending, bytes]) : bytes;
    const cut = lastIndexOfBytes(all, BLANK_LINE);
    // what is held back is copied: the upstream may reuse the memory of the chunk it gave
    if (cut < 0) {
      this.pending = all.slice();
      return EMPTY;
    }
    this.pending = all.slice(cut + 2);
    return this.pass(all.subarray(0, cut + 2));
  }

  end() {
    const bytes = this.pending;
    const rest = text(bytes);
    this.pending = EMPTY;
    const keep = !rest.trim() || !hasUsageObject(bytes) || this.see(rest);
    return { rest: keep ? bytes : EMPTY, usage: this.usage };
  }
}

/** A tap for an SSE stream; `dropUsageEvent`: remove the usage-only event (the router asked for it, not the client). */
export const sseTap = (dropUsageEvent: boolean): Tap => new SseTap(dropUsageEvent);
