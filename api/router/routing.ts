// A model's routing as the router uses it: the policy its spec names, and for `prefix` each knob with its default.
import type { ModelSpec } from "../../shared/schemas/model.js";
import type { Routing } from "./types.js";

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
 * …or up to this many requests more than the least loaded replica, whatever the mean, or within the queue bound below.
 * A short request — a conversation's first turn, a one-off question — loses little when it goes elsewhere, so it keeps
 * no slack of its own and spills to leave room for the conversations that do.
 */
export const DEFAULT_PREFIX_SLACK = 0;
/**
 * A request may wait behind prompts not yet begun on its key's replica of up to this × its own text's characters more
 * than on the replica with the fewest: with engines that prefill one prompt after another, a request whose own text is
 * long — a conversation's history, a pasted document — would cost about that long to prefill elsewhere, so it stays
 * while the prefills queued ahead of it cost a few times less than that; a short one spills at once. Counted in
 * characters, so it holds for prompts of a few hundred tokens and of a hundred thousand alike.
 */
export const DEFAULT_QUEUE_FACTOR = 4;

/** A model's routing with its defaults. */
export function routingOf(spec: Pick<ModelSpec, "routing" | "prefixRouting">): Routing {
  if (spec.routing === "p2c") return { policy: "p2c" };
  return {
    policy: "prefix",
    blockChars: spec.prefixRouting?.blockChars ?? DEFAULT_BLOCK_CHARS,
    keyBlocks: spec.prefixRouting?.keyBlocks ?? DEFAULT_KEY_BLOCKS,
    keyOn: spec.prefixRouting?.keyOn ?? "conversation",
    loadFactor: spec.prefixRouting?.loadFactor ?? DEFAULT_LOAD_FACTOR,
    slack: spec.prefixRouting?.slack ?? DEFAULT_PREFIX_SLACK,
    queueFactor: spec.prefixRouting?.queueFactor ?? DEFAULT_QUEUE_FACTOR,
  };
}
