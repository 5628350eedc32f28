// A request's prompt as an engine would read it, in order (a chat's tools and messages, a completion's prompt, a
// response's instructions and input), rendered the same way on every router instance as far as a limit, and hashed
// where it lies; and how much of it is the request's own. What prefix.ts keys and bounds requests by. Pure.

/** What a model's requests are keyed on: a conversation's system part and first user message, or the whole prompt. */
export type KeyOn = "conversation" | "prompt";

const MAX_PARTS = 256;

/** Pieces of text: each string counts for its first `lengths[i]` characters (nothing is copied to cut it). */
type Pieces = { strings: string[]; lengths: number[] };

/** Text of a content value: a string, or the text parts of an array (other parts by their type), as far as `room`. */
function textOf(content: unknown, room: number, out: Pieces): number {
  if (typeof content === "string") {
    const n = Math.min(content.length, room);
    out.strings.push(content);
    out.lengths.push(n);
    return n;
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
 * Text gathered as far as `limit` characters: only what is needed is rendered, and it is hashed where it lies (no
 * joined copy to hash).
 */
export class Gathered {
  private readonly out: Pieces = { strings: [], lengths: [] };
  private used = 0;
  constructor(private readonly limit: number) {}
  add(content: unknown) {
    if (this.used < this.limit) this.used += textOf(content, this.limit - this.used, this.out);
  }
  full() {
    return this.used >= this.limit;
  }
  length() {
    return this.used;
  }
  /** Whether it holds nothing but white space. */
  blank() {
    const { strings, lengths } = this.out;
    for (let p = 0; p < strings.length; p++)
      for (let i = 0; i < lengths[p]!; i++) if (!/\s/.test(strings[p]![i]!)) return false;
    return true;
  }
  text() {
    return this.out.strings.map((piece, i) => piece.slice(0, this.out.lengths[i])).join("");
  }
  /**
   * FNV-1a over the first `count` characters, two UTF-16 units a step (across the pieces' edges, so the same text
   * hashes alike however it was split), continuing from `h` — over whole blocks, the chain of each block's hash
   * continuing from the previous one's. int32 inside the loop (a uint32 past 2^31 would be a heap number at every
   * step), unsigned at the end.
   */
  hash(h: number, count: number): number {
    let x = h | 0;
    let left = count;
    let pending = -1;
    for (let p = 0; p < this.out.strings.length && left > 0; p++) {
      const piece = this.out.strings[p]!;
      const to = Math.min(this.out.lengths[p]!, left);
      let i = 0;
      if (pending >= 0 && to > 0) {
        x = Math.imul(x ^ (pending | (piece.charCodeAt(0) << 16)), 0x01000193);
        pending = -1;
        i = 1;
      }
      for (; i + 1 < to; i += 2) x = Math.imul(x ^ (piece.charCodeAt(i) | (piece.charCodeAt(i + 1) << 16)), 0x01000193);
      if (i < to) pending = piece.charCodeAt(i);
      left -= to;
    }
    if (pending >= 0) x = Math.imul(x ^ pending, 0x01000193);
    return x >>> 0;
  }
}

/** A message or input item: its role (or type), its content, a newline. */
export function addItem(h: Gathered, item: unknown) {
  const it = (item ?? {}) as Record<string, unknown>;
  h.add(`${String(it.role ?? it.type ?? "")}:`);
  h.add(it.content);
  h.add("\n");
}

/** Items `from` … `to` - 1 of `items`, while there is room. */
export function addItems(h: Gathered, items: readonly unknown[], from: number, to: number) {
  for (let i = from; i < to && !h.full(); i++) addItem(h, items[i]);
}

/** What precedes the messages: a chat's tools (the engine's template puts them first), a response's instructions. */
export function addOpening(h: Gathered, isChat: boolean, body: Record<string, unknown>, limit: number) {
  if (!isChat) {
    h.add(body.instructions);
    h.add("\n");
  } else if (Array.isArray(body.tools) && body.tools.length) h.add(JSON.stringify(body.tools).slice(0, limit));
}

const listOf = (x: unknown): readonly unknown[] => (Array.isArray(x) ? x : []);

/** Characters a token id stands for where a prompt is given as token ids (about an English token's). */
const CHARS_PER_TOKEN = 4;

const isTokens = (x: unknown): x is number[] => Array.isArray(x) && x.length > 0 && typeof x[0] === "number";

/**
 * A completion's prompt, or the first of a batch: text, or token ids (a list of numbers, or the first of a list of
 * such lists), as the OpenAI API and the engines take them.
 */
function completionPrompt(prompt: unknown): unknown {
  return Array.isArray(prompt) && !isTokens(prompt) ? prompt[0] : prompt;
}

/**
 * Token ids as text, as far as `limit` characters: each id and a space (so ids that share their leading ids render to
 * texts that share their opening, and no two lists render alike).
 */
function tokenText(ids: number[], limit: number): string {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; i < ids.length && n < limit; i++) {
    const s = `${ids[i]} `;
    parts.push(s);
    n += s.length;
  }
  return parts.join("");
}

/**
 * The first `limit` characters of the prompt as an engine would see it in order: tools, then each message (role and
 * content) for chat; the prompt for completions (token ids as their numbers); instructions, then input, for
 * responses. Only what is needed is rendered (a 100,000-token prompt costs no more than a short one).
 */
export function promptHead(path: string, body: Record<string, unknown>, limit: number): string {
  return promptParts(path, body, limit).text();
}

export function promptParts(path: string, body: Record<string, unknown>, limit: number): Gathered {
  const h = new Gathered(limit);
  if (path.endsWith("/chat/completions")) {
    addOpening(h, true, body, limit);
    const messages = listOf(body.messages);
    addItems(h, messages, 0, Math.min(messages.length, MAX_PARTS));
  } else if (path.endsWith("/completions")) {
    const prompt = completionPrompt(body.prompt);
    h.add(isTokens(prompt) ? tokenText(prompt, limit) : prompt);
  } else if (path.endsWith("/responses")) {
    addOpening(h, false, body, limit);
    const input = listOf(body.input);
    if (typeof body.input === "string") h.add(body.input);
    else addItems(h, input, 0, Math.min(input.length, MAX_PARTS));
  }
  return h;
}

/**
 * A chat's messages or a response's input items (a string input is one user message), how many of them count (at most
 * MAX_PARTS), and the index of the first user message (`count` when there is none). Undefined for other paths.
 */
export function conversationItems(path: string, body: Record<string, unknown>) {
  const isChat = path.endsWith("/chat/completions");
  if (!isChat && !path.endsWith("/responses")) return undefined;
  const items = isChat
    ? listOf(body.messages)
    : typeof body.input === "string"
      ? [{ role: "user", content: body.input }]
      : listOf(body.input);
  const count = Math.min(items.length, MAX_PARTS);
  let firstUser = 0;
  while (firstUser < count && (items[firstUser] as { role?: unknown } | null)?.role !== "user") firstUser++;
  return { isChat, items, count, firstUser };
}

/** Characters of a content value: a string's, or the text parts' of an array (other parts count nothing). */
function charsOf(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (let i = 0; i < Math.min(content.length, MAX_PARTS); i++) {
    const part: unknown = content[i];
    if (typeof part === "string") n += part.length;
    else if (part && typeof (part as { text?: unknown }).text === "string") n += (part as { text: string }).text.length;
  }
  return n;
}

/**
 * How many characters of the prompt are the request's own rather than shared by its tenant: a chat's (or response's)
 * messages after its system part — its first user message, and the turns since (tool results and function calls
 * included), which its key's replica holds from the turns before — or the whole prompt where it has no system part (a
 * completion's first prompt; given as token ids, CHARS_PER_TOKEN characters an id). A first turn's own text counts
 * too, though no replica holds it yet: where it is long (a pasted document), the conversation's next turns will look
 * for it on the key's replica. Keyed on the whole prompt (`keyOn: "prompt"`), the system part counts too: the requests
 * that share it are the ones kept together. Only lengths are read: as cheap for a 100,000-token prompt as for a short
 * one.
 */
export function ownChars(path: string, body: Record<string, unknown>, keyOn: KeyOn = "conversation"): number {
  const conv = conversationItems(path, body);
  if (conv) {
    // with no user message, or keyed on the whole prompt, every item counts
    let n = keyOn === "prompt" && !conv.isChat ? charsOf(body.instructions) : 0;
    for (let i = conv.firstUser < conv.count && keyOn !== "prompt" ? conv.firstUser : 0; i < conv.count; i++) {
      // a response's function call and its output carry their text in `arguments` and `output`
      const it = (conv.items[i] ?? {}) as { content?: unknown; output?: unknown; arguments?: unknown };
      n += charsOf(it.content ?? it.output ?? it.arguments);
    }
    return n;
  }
  if (path.endsWith("/completions")) {
    const prompt = completionPrompt(body.prompt);
    return isTokens(prompt) ? prompt.length * CHARS_PER_TOKEN : charsOf(prompt);
  }
  return 0;
}
