// IMEX's peer list, nodes_config.cfg (agent.yaml `imex_nodes_config`): a pure parser, one reader, and the summary the
// heartbeat carries (its digest and count, re-read at most once a minute).
import { readFile } from "node:fs/promises";
import { canonicalAddresses, imexConfigDigest } from "../../shared/imex-config.js";
import type { Heartbeat } from "../../shared/schemas/agent.js";
import { errorMessage } from "./objects.js";

/** What the heartbeat says of the file: its digest (shared/imex-config.ts) and how many addresses it lists. */
export type ImexConfigSummary = NonNullable<Heartbeat["imexConfig"]>;

/** The file as read: absent (IMEX not set up here), its addresses, or why it could not be read. */
export type ImexNodesConfig =
  | { path: string; kind: "absent" }
  | { path: string; kind: "read"; addresses: string[] }
  | { path: string; kind: "unreadable"; error: string };

/**
 * Reads nodes_config.cfg: one IP address or host name per line, `#` to the end of a line a comment, blank lines and
 * surrounding whitespace (a CRLF's CR too) ignored; the addresses once each, sorted.
 */
export function parseImexNodesConfig(text: string): string[] {
  const lines = text.split(/\r?\n|\r/).map((line) => line.replace(/#.*$/, "").trim());
  return canonicalAddresses(lines.filter((line) => line !== ""));
}

/** Reads the file at `path`; a missing file (or directory) is `absent`, not an error. */
export async function readImexNodesConfig(path: string): Promise<ImexNodesConfig> {
  try {
    return { path, kind: "read", addresses: parseImexNodesConfig(await readFile(path, "utf8")) };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { path, kind: "absent" };
    return { path, kind: "unreadable", error: code ?? errorMessage(e) };
  }
}

/** The summary of a file that was read; undefined for one that is absent or unreadable. */
export async function summaryOf(c: ImexNodesConfig): Promise<ImexConfigSummary | undefined> {
  if (c.kind !== "read") return undefined;
  return { digest: await imexConfigDigest(c.addresses), addresses: c.addresses.length };
}

/**
 * The heartbeat's `imexConfig`, from a closure that reads the file again only when `everyMs` have passed since it
 * last did: heartbeats may come every few seconds on a fabric change, and the file changes by hand, rarely.
 */
export function cachedImexConfig(path: string, now: () => number, everyMs = 60_000) {
  let readAt: number | undefined;
  let last: ImexConfigSummary | undefined;
  return async (): Promise<ImexConfigSummary | undefined> => {
    if (readAt !== undefined && now() - readAt < everyMs) return last;
    readAt = now();
    last = await summaryOf(await readImexNodesConfig(path));
    return last;
  };
}
