// The request trace a routing benchmark replays, in the format of the published KV-cache traces (Mooncake's FAST'25
// traces/conversation_trace.jsonl, toolagent_trace.jsonl): one JSON object a line with `timestamp` (ms since the first
// request), `input_length` and `output_length` (tokens) and `hash_ids`, one id per 512-token block of the prompt —
// ceil(input_length / 512) of them, the last block partial when input_length is not a multiple of 512. An id names a
// block's whole content including everything before it, so equal leading ids are an equal prefix. The published traces
// carry no text; promptOf makes some, so that requests share exactly the prefixes their ids say. Pure: no I/O.
import { fnv1a32 } from "../shared/hash.js";
import { z } from "../shared/z.js";

/** Tokens in one hash block, as in the Mooncake traces. */
export const BLOCK_TOKENS = 512;

const count = (min: number) => z.number().int().min(min).max(Number.MAX_SAFE_INTEGER);

/** One request of a trace. */
export const TraceEntry = z.object({
  timestamp: count(0),
  input_length: count(1),
  output_length: count(1),
  hash_ids: z.array(count(0)),
});
export type TraceEntry = z.infer<typeof TraceEntry>;

/** Parses JSON-lines trace text (blank lines skipped), at most `limit` entries; a bad line throws with its number. */
export function readTrace(text: string, opts: { limit?: number } = {}): TraceEntry[] {
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  const out: TraceEntry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && out.length < limit; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const bad = (why: string) => new Error(`trace line ${i + 1}: ${why}`);
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (e) {
      throw bad(`not JSON (${e instanceof Error ? e.message : String(e)})`);
    }
    const r = TraceEntry.safeParse(json);
    if (!r.success) throw bad(r.error.issues.map((x) => `${x.path.join(".") || "line"}: ${x.message}`).join("; "));
    const e = r.data;
    const blocks = Math.ceil(e.input_length / BLOCK_TOKENS);
    if (e.hash_ids.length !== blocks)
      throw bad(
        `input_length ${e.input_length} is ${blocks} block(s) of ${BLOCK_TOKENS} tokens, but hash_ids has ${e.hash_ids.length}`,
      );
    const prev = out.at(-1);
    if (prev && e.timestamp < prev.timestamp)
      throw bad(`timestamp ${e.timestamp} is before the previous request's ${prev.timestamp}`);
    out.push(e);
  }
  return out;
}

/** One line of trace text for an entry, fields in the published traces' order. */
export function traceLine(e: TraceEntry): string {
  const { timestamp, input_length, output_length, hash_ids } = e;
  return JSON.stringify({ timestamp, input_length, output_length, hash_ids });
}

/** mulberry32: a small seeded PRNG, uniform in [0, 1). Deterministic across processes and releases. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

// 256 common English words, each one token in the usual BPE vocabularies (with its leading space), so that a block of
// 512 words is close to 512 tokens for a real engine too, not only for the mock engine that counts words.
const VOCAB = (
  "the of and to in is that for it as was with be by on not he this are or his from at which but have an they " +
  "you were her she there one all we their been has when who will more no if out so up said what its about " +
  "than into them can only other new some could time these two may then do first any my now such like our over " +
  "man me even most made after also did many before must through back years where much your way well down " +
  "should because each just those people how too little state good very make world still own see men work long " +
  "get here between both life being under never day same another know while last might us great old year off " +
  "come since against go came right used take three place small found part though general high upon school " +
  "every during without again home around hand public water form few house point end far head group number " +
  "system city left order real power side given light case week line move change river name word play open " +
  "tree sea ask car book keep face fact late hard plan door talk bird road hour rock fire wind rain snow blue " +
  "green red gold iron salt stone boat cold warm hot dark bright soft loud quiet fast slow early young north " +
  "south east west sun moon star sky cloud storm field farm garden bread milk tea coffee paper table chair " +
  "window wall floor glass metal"
).split(" ");

/**
 * The 512 words of one block: `[id]` (so different ids differ from the first word on, and no block's text starts
 * another's), then 511 words drawn from VOCAB by a PRNG keyed by the id. The same id always gives the same words.
 */
export function blockWords(id: number): string[] {
  const next = rng(fnv1a32(`llmgw trace block ${id}`));
  const words = [`[${id}]`];
  while (words.length < BLOCK_TOKENS) words.push(VOCAB[Math.floor(next() * VOCAB.length)]!);
  return words;
}

/** The prompt text of an entry: its blocks' words in order, cut to input_length words, joined by single spaces. */
export function promptOf(e: TraceEntry): string {
  const words: string[] = [];
  for (const id of e.hash_ids) {
    if (words.length >= e.input_length) break;
    words.push(...blockWords(id).slice(0, e.input_length - words.length));
  }
  return words.join(" ");
}

/**
 * The system prompt of each request, in blocks, as its client would send it apart from the conversation: the full
 * blocks that every request of the trace starting with the same block shares (a tenant's system prompt and tool schema,
 * where its conversations part). The published traces carry no message boundaries; this is the boundary their ids
 * imply. A request whose first block no other request starts with (a one-off) has none.
 */
export function systemBlocks(entries: readonly TraceEntry[]): Map<number, number> {
  const shared = new Map<number, number[]>();
  const alone = new Set<number>();
  for (const e of entries) {
    const full = e.hash_ids.slice(0, Math.floor(e.input_length / BLOCK_TOKENS));
    const had = shared.get(e.hash_ids[0]!);
    if (!had) {
      shared.set(e.hash_ids[0]!, full);
      alone.add(e.hash_ids[0]!);
      continue;
    }
    alone.delete(e.hash_ids[0]!);
    let k = 0;
    while (k < had.length && k < full.length && had[k] === full[k]) k++;
    shared.set(e.hash_ids[0]!, had.slice(0, k));
  }
  return new Map([...shared].map(([id, blocks]) => [id, alone.has(id) ? 0 : blocks.length]));
}

/** Where one message of a request starts, in words of its prompt, and whose it is. */
export type Turn = { role: "system" | "user" | "assistant"; from: number };

type TrieNode = { kids: Map<number, TrieNode>; last?: number };

/**
 * The messages each request of a trace is sent as, as a chat client would send its conversation: a request that goes
 * on from an earlier one — the earlier request's full blocks, past its system part, lead this one's ids, and this one
 * is longer than that request's prompt and reply together — repeats that request's messages, then the reply as an
 * assistant message (the earlier request's `output_length` words, from where its prompt ended), then a new user
 * message with the rest; the latest such request is the one it goes on from (the conversation's last turn). Any other
 * request is its first `system` blocks (systemBlocks) as a system message and the rest as one user message, or all
 * of it as one user message when that leaves nothing on one side. The published traces carry no message boundaries:
 * these are the ones their ids and lengths imply.
 */
export function turnsOf(entries: readonly TraceEntry[]): Turn[][] {
  const system = systemBlocks(entries);
  const root: TrieNode = { kids: new Map() };
  const out: Turn[][] = [];
  entries.forEach((e, i) => {
    const sys = system.get(e.hash_ids[0]!) ?? 0;
    // the deepest earlier request this one goes on from
    let from: number | undefined;
    let node = root;
    for (let depth = 1; depth <= e.hash_ids.length; depth++) {
      const next = node.kids.get(e.hash_ids[depth - 1]!);
      if (!next) break;
      node = next;
      const p = node.last === undefined ? undefined : entries[node.last]!;
      if (depth > sys && p && e.input_length > p.input_length + p.output_length) from = node.last;
    }
    if (from !== undefined) {
      const p = entries[from]!;
      out.push([
        ...out[from]!,
        { role: "assistant", from: p.input_length },
        { role: "user", from: p.input_length + p.output_length },
      ]);
    } else {
      const cut = sys * BLOCK_TOKENS;
      out.push(
        cut > 0 && cut < e.input_length
          ? [
              { role: "system", from: 0 },
              { role: "user", from: cut },
            ]
          : [{ role: "user", from: 0 }],
      );
    }
    // this request's full blocks lead to it
    node = root;
    for (const id of e.hash_ids.slice(0, Math.floor(e.input_length / BLOCK_TOKENS))) {
      let next = node.kids.get(id);
      if (!next) node.kids.set(id, (next = { kids: new Map() }));
      node = next;
    }
    if (node !== root) node.last = i;
  });
  return out;
}

/**
 * The chat messages for an entry, split where `turns` (turnsOf) says. Whatever the split, the words in order are
 * promptOf's, so the prompt's word count (what the mock engine reports as prompt tokens) is input_length, and a shared
 * prefix is the same words.
 */
export function messagesOf(
  e: TraceEntry,
  turns: readonly Turn[] = [{ role: "user", from: 0 }],
): { role: Turn["role"]; content: string }[] {
  const words = promptOf(e).split(" ");
  return turns.map((t, i) => ({ role: t.role, content: words.slice(t.from, turns[i + 1]?.from).join(" ") }));
}

/** Figures for a trace; `idealCacheHit` is the fraction of prompt tokens an infinite prefix cache would already hold. */
export function traceStats(entries: TraceEntry[]) {
  // a trie of the block prefixes seen so far: node → child by hash id
  const trie = new Map<string, number>();
  let prompt = 0;
  let cached = 0;
  let output = 0;
  for (const e of entries) {
    let node = 0;
    let hit = 0;
    let miss = false;
    for (const id of e.hash_ids) {
      const key = `${node} ${id}`;
      let child = trie.get(key);
      if (child === undefined) {
        miss = true;
        trie.set(key, (child = trie.size + 1));
      } else if (!miss) hit++;
      node = child;
    }
    prompt += e.input_length;
    cached += Math.min(hit * BLOCK_TOKENS, e.input_length);
    output += e.output_length;
  }
  const n = entries.length;
  const inputs = entries.map((e) => e.input_length).sort((a, b) => a - b);
  const span = n ? entries[n - 1]!.timestamp - entries[0]!.timestamp : 0;
  return {
    requests: n,
    meanInput: n ? prompt / n : 0,
    p50Input: inputs[Math.floor(n / 2)] ?? 0,
    maxInput: inputs[n - 1] ?? 0,
    meanOutput: n ? output / n : 0,
    durationS: span / 1000,
    rate: span ? ((n - 1) * 1000) / span : 0,
    uniqueBlocks: trie.size,
    idealCacheHit: prompt ? cached / prompt : 0,
  };
}
