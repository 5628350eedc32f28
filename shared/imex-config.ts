// The digest of an IMEX peer list (the addresses of /etc/nvidia-imex/nodes_config.cfg): the agent sends it with its
// heartbeat, and the control plane computes the same over the addresses it sees in the node's NVLink domain, so the
// two can be compared without shipping the list. SHA-256 through Web Crypto, which Node and Workers both have.
import { compareText } from "./sort.js";

/** The addresses once each, in code-unit order: the list both sides digest. */
export function canonicalAddresses(addresses: readonly string[]): string[] {
  return [...new Set(addresses)].sort(compareText);
}

/** Hex SHA-256 of the sorted, de-duplicated addresses joined by "\n"; the same set in any order gives the same digest. */
export async function imexConfigDigest(addresses: readonly string[]): Promise<string> {
  const text = canonicalAddresses(addresses).join("\n");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
