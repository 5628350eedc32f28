// `llmgw ctl`'s arguments read into values: kinds, counts, durations, lists. Pure; a bad value is a UsageError.
import { UsageError } from "./errors.js";

/** What `get` and `delete` take, each with the names it answers to. */
export const KINDS = {
  models: ["model", "models"],
  deployments: ["deployment", "deployments", "deploy"],
  replicas: ["replica", "replicas"],
  nodes: ["node", "nodes"],
  "api-keys": ["api-key", "api-keys", "apikey", "apikeys", "key", "keys"],
  tokens: ["token", "tokens", "admin-token", "admin-tokens"],
  "join-tokens": ["join-token", "join-tokens"],
} as const;
export type Kind = keyof typeof KINDS;

/** The kind a word names (`model`, `deployments`, `keys` …). */
export function kindOf(word: string): Kind {
  const w = word.toLowerCase();
  for (const [kind, names] of Object.entries(KINDS)) if ((names as readonly string[]).includes(w)) return kind as Kind;
  throw new UsageError(`unknown kind ${word}: one of ${Object.keys(KINDS).join(", ")}`);
}

/** A whole number from 1 up, for `flag`. */
export function positiveInt(value: string, flag: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${flag}: expected a whole number of 1 or more, got ${JSON.stringify(value)}`);
  return n;
}

const UNIT_S = { s: 1, m: 60, h: 3600, d: 86400 } as const;

/** Seconds from `90`, `90s`, `15m`, `24h` or `7d`. */
export function durationS(value: string, flag: string): number {
  const m = /^(\d+)\s*([smhd]?)$/.exec(value.trim());
  const s = m ? Number(m[1]) * UNIT_S[(m[2] || "s") as keyof typeof UNIT_S] : NaN;
  if (!Number.isSafeInteger(s) || s < 1)
    throw new UsageError(
      `${flag}: expected a duration such as 3600, 90s, 15m, 24h or 7d, got ${JSON.stringify(value)}`,
    );
  return s;
}

/** `a,b` as ["a", "b"]; an empty string is an empty list. */
export function commaList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export const DEFAULT_SERVER = "http://127.0.0.1:8080";

/**
 * The server and admin token to use: flags first, then LLMGW_SERVER / LLMGW_TOKEN; the server defaults to
 * 127.0.0.1:8080.
 */
export function resolveTarget(
  flags: { server?: string; token?: string },
  env: { LLMGW_SERVER?: string; LLMGW_TOKEN?: string },
): { server: string; token: string } {
  const server = flags.server || env.LLMGW_SERVER || DEFAULT_SERVER;
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UsageError(
      `--server / LLMGW_SERVER: not a URL: ${JSON.stringify(server)} (for example ${DEFAULT_SERVER})`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--server / LLMGW_SERVER: expected an http:// or https:// URL, got ${JSON.stringify(server)}`);
  const token = flags.token || env.LLMGW_TOKEN;
  if (!token) throw new UsageError("no admin token: pass --token or set LLMGW_TOKEN (an llmgw_adm_… token)");
  return { server, token };
}
