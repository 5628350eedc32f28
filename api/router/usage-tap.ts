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

/** A tap for an SSE stream: whole events pass on as soon as they are complete; `dropUsageEvent` removes the usage-only event. */
export function sseTap(dropUsageEvent: boolean): Tap {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  let usage: Usage | undefined;
  const see = (event: string): boolean => {
    if (!event.includes('"usage"')) return true;
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
  return {
    chunk(b) {
      pending += decoder.decode(b, { stream: true });
      const cut = pending.lastIndexOf("\n\n");
      if (cut < 0) return new Uint8Array();
      const complete = pending.slice(0, cut + 2);
      pending = pending.slice(cut + 2);
      const events = complete.split(/(?<=\n\n)/);
      const kept = events.filter(see);
      return kept.length === events.length ? encoder.encode(complete) : encoder.encode(kept.join(""));
    },
    end() {
      const rest = pending + decoder.decode();
      const keep = !rest.trim() || see(rest);
      return { rest: keep ? encoder.encode(rest) : new Uint8Array(), usage };
    },
  };
}
