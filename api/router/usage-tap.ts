// Reading token usage out of responses as they pass through, without holding them back: a JSON body's `usage`, or the
// last SSE event that carries one. When the router itself asked upstream for the usage event (the client streamed
// without `stream_options.include_usage`), that event is dropped so the client gets exactly what it asked for.
import type { Usage } from "./types.js";

const MAX_JSON_BYTES = 4 * 1024 * 1024;

/** `usage` of an OpenAI response object, in prompt/completion tokens (Responses API names included). */
export function usageOf(x: unknown): Usage | undefined {
  const u = (x as { usage?: Record<string, unknown> } | null)?.usage;
  if (!u || typeof u !== "object") return undefined;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
  const prompt = n(u.prompt_tokens ?? u.input_tokens);
  const completion = n(u.completion_tokens ?? u.output_tokens);
  return { promptTokens: prompt, completionTokens: completion };
}

export type Tap = {
  /** The bytes to pass on for one upstream chunk (the same chunk unless an event had to be dropped or held). */
  chunk(bytes: Uint8Array): Uint8Array;
  /** What is left to pass on at the end, and the usage seen. */
  end(): { rest: Uint8Array; usage: Usage | undefined };
};

/** A tap for a JSON body: passes bytes through and parses the whole body (up to a size) at the end. */
export function jsonTap(): Tap {
  const parts: Uint8Array[] = [];
  let size = 0;
  return {
    chunk(b) {
      if (size + b.length <= MAX_JSON_BYTES) parts.push(b);
      size += b.length;
      return b;
    },
    end() {
      let usage: Usage | undefined;
      if (size <= MAX_JSON_BYTES) {
        try {
          usage = usageOf(JSON.parse(Buffer.concat(parts).toString("utf8")));
        } catch {
          // not JSON: no usage
        }
      }
      return { rest: new Uint8Array(), usage };
    },
  };
}

const EMPTY = new Uint8Array();
// events carry usage as an object only when it is there (`"usage": null` on every other chunk is skipped unparsed)
const USAGE_OBJECT = /"usage"\s*:\s*\{/;
const USAGE_KEY = Buffer.from('"usage"');
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
/** True when `b` has `"usage"` followed by `:` and an object, looked for on the bytes. */
function mentionsUsage(b: Buffer): boolean {
  for (let at = b.indexOf(USAGE_KEY); at >= 0; at = b.indexOf(USAGE_KEY, at + 1)) {
    let i = at + USAGE_KEY.length;
    while (isSpace(b[i])) i++;
    if (b[i++] !== 0x3a) continue;
    while (isSpace(b[i])) i++;
    if (b[i] === 0x7b) return true;
  }
  return false;
}
const BLANK_LINE = Buffer.from("\n\n");

/**
 * A tap for an SSE stream: whole events pass on as soon as they are complete; `dropUsageEvent` removes the usage-only
 * event. Works on bytes: only events that carry a usage object are decoded (a chunk can end inside a character, never
 * inside the blank line that ends an event).
 */
export function sseTap(dropUsageEvent: boolean): Tap {
  const NOTHING = Buffer.alloc(0);
  let pending: Buffer = NOTHING;
  let usage: Usage | undefined;
  const see = (event: string): boolean => {
    if (!USAGE_OBJECT.test(event)) return true;
    const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
    try {
      const obj = JSON.parse(data) as { usage?: unknown; choices?: unknown[]; response?: unknown };
      const u = usageOf(obj) ?? usageOf(obj.response);
      if (u) usage = u;
      return !(dropUsageEvent && Array.isArray(obj.choices) && obj.choices.length === 0 && obj.usage);
    } catch {
      return true;
    }
  };
  /** Complete events, less a dropped one. */
  const pass = (events: Buffer): Uint8Array => {
    if (!mentionsUsage(events)) return events;
    const each = events.toString("utf8").split(/(?<=\n\n)/);
    const kept = each.filter(see);
    return kept.length === each.length ? events : Buffer.from(kept.join(""));
  };
  return {
    chunk(b) {
      const bytes = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
      const n = bytes.length;
      // the usual chunk: whole events, nothing held back from before
      if (!pending.length && n >= 2 && bytes[n - 1] === 0x0a && bytes[n - 2] === 0x0a) return pass(bytes);
      const all = pending.length ? Buffer.concat([pending, bytes]) : bytes;
      const cut = all.lastIndexOf(BLANK_LINE);
      if (cut < 0) {
        pending = Buffer.from(all);
        return EMPTY;
      }
      pending = cut + 2 < all.length ? Buffer.from(all.subarray(cut + 2)) : NOTHING;
      return pass(all.subarray(0, cut + 2));
    },
    end() {
      const rest = pending.toString("utf8");
      pending = NOTHING;
      const keep = !rest.trim() || see(rest);
      return { rest: keep ? Buffer.from(rest) : EMPTY, usage };
    },
  };
}
