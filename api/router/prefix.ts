// Prefix affinity without shared state: the leading part of a request's prompt, rendered the same way on every router
// instance, cut into fixed-size blocks with a chain hash, picks a replica by rendezvous hashing — so requests that
// share their leading blocks (a system prompt, a tool schema, a conversation's history) reach the replica whose
// prefix cache already holds them, whichever instance they arrive at. Pure.

import type { ModelSpec } from "../../shared/schemas/model.js";
import type { Routing } from "./types.js";

/** How one model's requests are keyed: block size in characters and how many leading blocks make the key. */
export type PrefixSettings = { blockChars: number; keyBlocks: number };

/**
 * 64 characters: about 16 tokens of English text (~4 characters a token), vLLM's and SGLang's KV block of 16 tokens.
 * The router has no tokenizer, and a character count is the same on every instance.
 */
export const DEFAULT_BLOCK_CHARS = 64;
/** 32 blocks (2,048 characters, ~512 tokens): a typical system prompt or tool schema, or a conversation's opening. */
export const DEFAULT_KEY_BLOCKS = 32;

/** A replica may take this × the mean of outstanding requests before the next one in the key's order gets it. */
export const DEFAULT_LOAD_FACTOR = 1.25;
/**
 * …or up to this many requests more than the least loaded replica, whatever the mean: with few requests outstanding on
 * an instance the bound alone is coarse (one request on each of two of four replicas: another for either passes it),
 * and a conversation's turns would scatter between replicas that an engine's batch would have served together.
 */
export const DEFAULT_PREFIX_SLACK = 2;

const MAX_PARTS = 256;

/** Text of a content value: a string, or the text parts of an array (other parts by their type), as far as `room`. */
function textOf(content: unknown, room: number, out: string[]): number {
  if (typeof content === "string") {
    out.push(content.length > room ? content.slice(0, room) : content);
    return Math.min(content.length, room);
  }
  if (!Array.isArray(content)) return 0;
  let used = 0;
  for (const part of content.slice(0, MAX_PARTS)) {
    if (used >= room) break;
    if (typeof part === "string") used += textOf(part, room - used, out);
    else if (part && typeof part === "object") {
      const p = part as Record<string, unknown>;
      const text = typeof p.text === "string" ? p.text : `[${String(p.type ?? "part")}]`;
      used += textOf(text, room - used, out);
    }
  }
  return used;
}

/**
 * The first `limit` characters of the prompt as an engine would see it in order: tools, then each message (role and
 * content) for chat; the prompt for completions; instructions, then input, for responses. Only what is needed is
 * rendered (a 100,000-token prompt costs no more than a short one).
 */
export function promptHead(path: string, body: Record<string, unknown>, limit: number): string {
  const out: string[] = [];
  let used = 0;
  const add = (content: unknown) => {
    if (used < limit) used += textOf(content, limit - used, out);
  };
  const sep = () => add("\n");
  if (path.endsWith("/chat/completions")) {
    if (Array.isArray(body.tools) && body.tools.length) add(JSON.stringify(body.tools).slice(0, limit));
    for (const m of Array.isArray(body.messages) ? body.messages.slice(0, MAX_PARTS) : []) {
      if (used >= limit) break;
      const msg = (m ?? {}) as Record<string, unknown>;
      add(`${String(msg.role ?? "")}:`);
      add(msg.content);
      sep();
    }
  } else if (path.endsWith("/completions")) {
    add(Array.isArray(body.prompt) ? body.prompt[0] : body.prompt);
  } else if (path.endsWith("/responses")) {
    add(body.instructions);
    sep();
    const input = body.input;
    if (typeof input === "string") add(input);
    else if (Array.isArray(input))
      for (const item of input.slice(0, MAX_PARTS)) {
        const it = (item ?? {}) as Record<string, unknown>;
        add(`${String(it.role ?? it.type ?? "")}:`);
        add(it.content);
        sep();
      }
  }
  const text = out.join("");
  return text.length > limit ? text.slice(0, limit) : text;
}

/** FNV-1a over `text`, continuing from `h`: a block's chain hash is its text hashed on from the previous block's. */
function chain(h: number, text: string): number {
  let x = h;
  for (let i = 0; i < text.length; i++) x = Math.imul(x ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return x;
}

/** The chain hash of `head`'s full blocks from `h` (of its whole text when it has none, and `tail`: its last part too). */
function chainBlocks(h: number, head: string, blockChars: number, tail: boolean): number {
  const full = Math.floor(head.length / blockChars) * blockChars;
  if (!full) return chain(h, head);
  let x = h;
  for (let at = 0; at < full; at += blockChars) x = chain(x, head.slice(at, at + blockChars));
  return tail && full < head.length ? chain(x, head.slice(full)) : x;
}

/**
 * A chat's (or response's) opening: what comes before its first user message — tools, system and developer messages
 * (a response's instructions) — and that first user message, each rendered as promptHead does, as far as `limit`.
 * Undefined for a completion, which has no such structure.
 */
export function conversationHead(
  path: string,
  body: Record<string, unknown>,
  limit: number,
): { before: string; first: string } | undefined {
  const isChat = path.endsWith("/chat/completions");
  if (!isChat && !path.endsWith("/responses")) return undefined;
  const render = (b: Record<string, unknown>) => promptHead(path, b, limit);
  // a response's input as a string is one user message
  const list = isChat
    ? body.messages
    : typeof body.input === "string"
      ? [{ role: "user", content: body.input }]
      : body.input;
  const items: unknown[] = Array.isArray(list) ? list.slice(0, MAX_PARTS) : [];
  const at = items.findIndex((m) => (m as { role?: unknown } | null)?.role === "user");
  const opening = isChat ? { tools: body.tools } : { instructions: body.instructions };
  const key = isChat ? "messages" : "input";
  return {
    before: render({ ...opening, [key]: at < 0 ? items : items.slice(0, at) }),
    first: at < 0 ? "" : render({ [key]: [items[at]] }),
  };
}

/**
 * The routing key of a request. A chat or response with a system part (tools, system or developer messages,
 * instructions) before its first user message is keyed on both: that part and the first user message, each up to
 * `keyBlocks` blocks — every turn of a conversation resends both, so its turns share the key, while conversations
 * under one system prompt spread over the replicas rather than all following it to one. Otherwise the key is the chain
 * hash of the prompt's leading `keyBlocks` full blocks (a prompt shorter than that: of its full blocks, or of its
 * whole text when it has none). Undefined when there is no prompt to key on.
 */
export function prefixKey(path: string, body: Record<string, unknown>, s: PrefixSettings): number | undefined {
  const limit = s.blockChars * s.keyBlocks;
  const start = 0x811c9dc5;
  const conv = conversationHead(path, body, limit);
  if (conv?.before.trim() && conv.first)
    return chainBlocks(chainBlocks(start, conv.before, s.blockChars, true), conv.first, s.blockChars, true);
  const head = promptHead(path, body, limit);
  return head ? chainBlocks(start, head, s.blockChars, false) : undefined;
}

/** A 32-bit mix of the key and a replica's id (murmur3's finalizer): the replica's rendezvous weight for the key. */
export function weight(key: number, replicaHash: number): number {
  let h = (key ^ Math.imul(replicaHash, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** A model's routing with its defaults. */
export function routingOf(spec: Pick<ModelSpec, "routing" | "prefixRouting">): Routing {
  if (spec.routing === "p2c") return { policy: "p2c" };
  return {
    policy: "prefix",
    blockChars: spec.prefixRouting?.blockChars ?? DEFAULT_BLOCK_CHARS,
    keyBlocks: spec.prefixRouting?.keyBlocks ?? DEFAULT_KEY_BLOCKS,
    loadFactor: spec.prefixRouting?.loadFactor ?? DEFAULT_LOAD_FACTOR,
    slack: spec.prefixRouting?.slack ?? DEFAULT_PREFIX_SLACK,
  };
}
