// Prefix affinity without shared state: the opening of a request's prompt — a conversation's system part and first user
// message, or else its leading blocks — rendered the same way on every router instance and hashed, picks a replica by
// rendezvous hashing, so requests that share it (a conversation's turns, a prompt's fixed opening) reach the replica
// whose prefix cache already holds them, whichever instance they arrive at. Pure.

import {
  addItem,
  addItems,
  addOpening,
  conversationItems,
  Gathered,
  type KeyOn,
  ownChars,
  promptParts,
} from "./prompt-text.js";
import type { PrefixPick, Routing } from "./types.js";

/**
 * How one model's requests are keyed: block size in characters, how many leading blocks make the key, and whether a
 * conversation's system part and first user message are keyed apart (`conversation`, the default) or the prompt as one.
 */
export type PrefixSettings = { blockChars: number; keyBlocks: number; keyOn?: KeyOn };

/**
 * A chat's (or response's) opening: what comes before its first user message — tools, system and developer messages
 * (a response's instructions) — and that first user message, each rendered as promptHead does, as far as `limit`.
 * Undefined for a completion, which has no such structure, and where there is no system part or no user message.
 */
function conversationParts(
  path: string,
  body: Record<string, unknown>,
  limit: number,
): { before: Gathered; first: Gathered } | undefined {
  const conv = conversationItems(path, body);
  if (!conv || conv.firstUser >= conv.count) return undefined;
  const { isChat, items, firstUser: at } = conv;
  const before = new Gathered(limit);
  addOpening(before, isChat, body, limit);
  addItems(before, items, 0, at);
  if (before.blank()) return undefined;
  const first = new Gathered(limit);
  addItem(first, items[at]);
  return { before, first };
}

/**
 * The routing key of a request. A chat or response with a system part (tools, system or developer messages,
 * instructions) before its first user message is keyed on both: that part and the first user message, each up to
 * `keyBlocks` blocks — every turn of a conversation resends both, so its turns share the key, while conversations
 * under one system prompt spread over the replicas rather than all following it to one. Otherwise — and always with
 * `keyOn: "prompt"` — the key is the chain hash of the prompt's leading `keyBlocks` full blocks (a prompt shorter than that: of its full blocks, or of its
 * whole text when it has none). Undefined when there is no prompt to key on.
 */
export function prefixKey(path: string, body: Record<string, unknown>, s: PrefixSettings): number | undefined {
  const limit = s.blockChars * s.keyBlocks;
  const start = 0x811c9dc5;
  const conv = s.keyOn === "prompt" ? undefined : conversationParts(path, body, limit);
  if (conv) return conv.first.hash(conv.before.hash(start, conv.before.length()), conv.first.length());
  const head = promptParts(path, body, limit);
  const n = head.length();
  if (!n) return undefined;
  const full = Math.floor(n / s.blockChars) * s.blockChars;
  return head.hash(start, full || n);
}

/**
 * A request's pick under `routing: prefix`: its key, the model's load factor and slack, and its own characters
 * (`ownChars`) with the model's `queueFactor` for the queue bound (api/router/balancer.ts byPrefix). Undefined when
 * there is no prompt to key on.
 */
export function prefixPick(
  path: string,
  body: Record<string, unknown>,
  r: Extract<Routing, { policy: "prefix" }>,
): PrefixPick | undefined {
  const key = prefixKey(path, body, r);
  if (key === undefined) return undefined;
  return {
    key,
    loadFactor: r.loadFactor,
    slack: r.slack,
    own: ownChars(path, body, r.keyOn),
    queueFactor: r.queueFactor,
  };
}

/** A 32-bit mix of the key and a replica's id (murmur3's finalizer): the replica's rendezvous weight for the key. */
export function weight(key: number, replicaHash: number): number {
  let h = (key ^ Math.imul(replicaHash, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
