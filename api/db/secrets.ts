// Secrets and ids with Web Crypto only, so the Node and Worker entries share them.

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random base62 string of `length` characters (rejection sampling keeps it uniform). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

export type SecretKind = "adm" | "join" | "node" | "key";

/** A new secret with its recognisable prefix: `llmgw_adm_…`, `llmgw_join_…`, `llmgw_node_…`, `llmgw_key_…`. */
export function newSecret(kind: SecretKind): string {
  return `llmgw_${kind}_${randomBase62(40)}`;
}

/** The kind a presented secret claims by its prefix, if any. */
export function secretKind(token: string): SecretKind | undefined {
  const m = /^llmgw_(adm|join|node|key)_/.exec(token);
  return m?.[1] as SecretKind | undefined;
}

let syncHash: ((secret: string) => string) | undefined;

/**
 * Gives hashSecret a synchronous SHA-256 of the same result (the Node entry passes node:crypto's): every agent call
 * hashes its token, and Web Crypto's digest is a round trip through the thread pool each time.
 */
export function useSyncHash(hash: (secret: string) => string): void {
  syncHash = hash;
}

/** Hex SHA-256 of a secret: what the database stores instead of it. */
export async function hashSecret(secret: string): Promise<string> {
  if (syncHash) return syncHash(secret);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compares two strings in time that depends only on their length. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
