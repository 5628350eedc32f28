// FNV-1a, the one non-cryptographic hash llmgw uses: stable across processes, instances and releases (placement
// stores fingerprints made with it; every router instance must map a session to the same replica).

/** FNV-1a 32-bit over a string's UTF-16 code units, as an unsigned integer. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK64 = 0xffffffffffffffffn;

/** FNV-1a 64-bit over a string's UTF-8 bytes, as 16 hex digits. */
export function fnv1a64(text: string): string {
  let h = FNV64_OFFSET;
  for (const byte of new TextEncoder().encode(text)) h = ((h ^ BigInt(byte)) * FNV64_PRIME) & MASK64;
  return h.toString(16).padStart(16, "0");
}
