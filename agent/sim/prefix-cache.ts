// The mock engine's prefix (KV) cache, modelled on vLLM's automatic prefix caching: a sequence is cut into full blocks
// of `blockTokens` tokens, each named by a chain hash (the block's tokens and the hash of the block before it), so a
// block can hit only when every block before it is cached too; blocks are evicted least recently used first. It sees
// only the tokens the engine computes, never a hint from the client. No I/O, no clock.
import { hash } from "node:crypto";

/** vLLM's default KV block size on CUDA, in tokens. */
export const DEFAULT_BLOCK_TOKENS = 16;

/**
 * A replica's KV cache, in tokens, when none is given. Llama-3.1-8B keeps 128 KiB of KV a token (32 layers × 8 KV
 * heads × 128 dims × K and V × 2 bytes); on one 80 GB H100 at vLLM's default 0.9 memory utilization, ~50 GB are left
 * after the weights and activations: ~400k tokens. 200,000 is a conservative round figure for an H100-class replica
 * (a larger model, a lower utilization, or tensor parallelism over fewer free bytes land there).
 */
export const DEFAULT_CAPACITY_TOKENS = 200_000;

export type PrefixCacheOptions = { capacityTokens?: number; blockTokens?: number };

export type PrefixCache = {
  readonly blockTokens: number;
  readonly capacityBlocks: number;
  /**
   * Finds how much of `prompt` is cached: its longest run of leading cached full blocks, stopping short of the last
   * prompt token (vLLM always recomputes that one for its logits, so a repeated prompt still prefills a block). Then
   * caches, or marks as just used, every full block of `prompt` followed by `computed` (the generated tokens whose KV
   * the engine computes, so that the next turn of a conversation hits the reply too).
   */
  lookupAndInsert(
    prompt: readonly string[],
    computed?: readonly string[],
  ): { queriedTokens: number; cachedTokens: number };
  /** How many leading tokens of `prompt` are cached now, as lookupAndInsert would find them; changes nothing. */
  peek(prompt: readonly string[]): number;
  /** Prompt tokens looked up and found so far (vLLM's prefix_cache_queries and prefix_cache_hits). */
  stats(): { queries: number; hits: number };
  /** How many blocks are cached now. */
  size(): number;
};

/**
 * The chain hash of each full block of `tokens` (tokens hold no whitespace, as the mock's words never do): SHA-1 of the
 * previous block's hash and this block's tokens, through `crypto.hash` (~10 ms for a 100k-token prompt here).
 */
export function blockHashes(tokens: readonly string[], blockTokens: number): string[] {
  const out: string[] = [];
  let prev = "";
  for (let end = blockTokens; end <= tokens.length; end += blockTokens) {
    let text = prev;
    for (let i = end - blockTokens; i < end; i++) text += ` ${tokens[i]}`;
    prev = hash("sha1", text, "base64");
    out.push(prev);
  }
  return out;
}

/** Makes one replica's prefix cache: `capacityTokens` (default 200,000) rounded down to whole blocks. */
export function createPrefixCache(opts: PrefixCacheOptions = {}): PrefixCache {
  const blockTokens = opts.blockTokens ?? DEFAULT_BLOCK_TOKENS;
  const capacityTokens = opts.capacityTokens ?? DEFAULT_CAPACITY_TOKENS;
  if (!Number.isInteger(blockTokens) || blockTokens < 1)
    throw new Error(`blockTokens must be a positive integer, not ${blockTokens}`);
  if (!Number.isInteger(capacityTokens) || capacityTokens < 0)
    throw new Error(`capacityTokens must be an integer from 0 up, not ${capacityTokens}`);
  const capacityBlocks = Math.floor(capacityTokens / blockTokens);
  // a Set iterates in insertion order: re-adding a block moves it to the end, so the first one is the least recent
  const blocks = new Set<string>();
  const stats = { queries: 0, hits: 0 };

  /** Leading full blocks of `hashes` that are cached, short of the prompt's last token. */
  function found(hashes: readonly string[], promptTokens: number) {
    const lookable = Math.max(0, Math.floor((promptTokens - 1) / blockTokens));
    let hit = 0;
    while (hit < lookable && blocks.has(hashes[hit]!)) hit++;
    return hit;
  }

  function lookupAndInsert(prompt: readonly string[], computed: readonly string[] = []) {
    const hashes = blockHashes(computed.length ? prompt.concat(computed) : prompt, blockTokens);
    const hit = found(hashes, prompt.length);
    // last block first, so that a sequence's head is the most recent: eviction takes its tail before its head (vLLM
    // frees a request's blocks in reverse order for the same reason), and a sequence over capacity keeps its head
    for (let i = hashes.length - 1; i >= 0; i--) {
      blocks.delete(hashes[i]!);
      blocks.add(hashes[i]!);
    }
    for (const oldest of blocks) {
      if (blocks.size <= capacityBlocks) break;
      blocks.delete(oldest);
    }
    stats.queries += prompt.length;
    stats.hits += hit * blockTokens;
    return { queriedTokens: prompt.length, cachedTokens: hit * blockTokens };
  }

  const peek = (prompt: readonly string[]) => found(blockHashes(prompt, blockTokens), prompt.length) * blockTokens;

  return { blockTokens, capacityBlocks, lookupAndInsert, peek, stats: () => ({ ...stats }), size: () => blocks.size };
}
