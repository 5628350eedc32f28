// IMEX (multi-node NVLink memory export) from `nvidia-imex-ctl`: pure parsers of `-q` and `-N`, plus one reader.
import { readdir } from "node:fs/promises";
import type { ImexState, Inventory } from "../../shared/schemas/inventory.js";
import { type Runner, run as runCommand } from "./exec.js";

type Imex = Inventory["imex"];
type DiscoveryError = Inventory["errors"][number];
export type ImexDomain = {
  domainState?: string;
  nodes: { index: number; addr: string; status: string; version?: string }[];
};
type ImexNode = ImexDomain["nodes"][number];

// Daemon states `-q` can print (DCGM lists 0-7 for DCGM_FI_IMEX_DAEMON_STATUS); all but READY mean "cannot export now".
const DOWN = [
  "UNAVAILABLE",
  "NOT_READY",
  "INITIALIZING",
  "STARTING_AUTH_SERVER",
  "WAITING_FOR_PEERS",
  "WAITING_FOR_RECOVERY",
  "INIT_GPU",
  "SHUTTING_DOWN",
];

/** Reads `nvidia-imex-ctl -q` (one word: READY, UNAVAILABLE …); throws an Error naming the source on anything else. */
export function parseImexQuery(text: string): ImexState {
  const word = text.trim().split(/\s+/)[0] ?? "";
  if (word === "READY") return "ready";
  if (word === "DEGRADED") return "degraded";
  if (DOWN.includes(word)) return "down";
  throw new Error(
    `nvidia-imex-ctl -q: ${word ? `unexpected output ${JSON.stringify(text.trim().slice(0, 120))}` : "no output"}`,
  );
}

const NODE = /^Node #(\d+)\s+-\s+(\S+)\s+-\s+(\S+)(?:\s+-\s+Version:\s*(\S+))?\s*$/;

function parseText(text: string): ImexDomain {
  const nodes: ImexNode[] = [];
  for (const [n, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    // A capture may run on into `-s` output after the table; the domain state closes the `-N` report.
    const state = /^Domain State:\s*(\S+)/.exec(line);
    if (state) return { domainState: state[1]!, nodes };
    if (!line.startsWith("Node #")) continue; // legend, timestamp, `Nodes:`, the connectivity matrix, a leading `-q` word
    const m = NODE.exec(line);
    if (!m) throw new Error(`nvidia-imex-ctl -N: line ${n + 1} not understood: ${JSON.stringify(line.slice(0, 120))}`);
    nodes.push({ index: Number(m[1]), addr: m[2]!, status: m[3]!, ...(m[4] ? { version: m[4] } : {}) });
  }
  if (!nodes.length) throw new Error("nvidia-imex-ctl -N: no node list and no `Domain State:` line");
  return { nodes };
}

type J = Record<string, unknown>;
const isObj = (x: unknown): x is J => typeof x === "object" && x !== null && !Array.isArray(x);
const str = (o: J, ...keys: string[]) =>
  keys.map((k) => o[k]).find((v): v is string => typeof v === "string" && v !== "");

// The shape of `-N -j` is INFERRED, not taken from a capture (none is published): NVIDIA/ai-cloud-validation's IMEX
// tests read `{status: "UP", timestamp, nodes: {"0": {status, host (IP), hostName, version, connections: {…}}}}`.
// Field names and `nodes` as array or index-keyed object are accepted loosely until a real capture says otherwise.
function parseJson(data: unknown): ImexDomain {
  if (!isObj(data)) throw new Error("nvidia-imex-ctl -N: JSON is not an object");
  const raw = data.nodes ?? data.Nodes;
  const entries: [string, unknown][] = Array.isArray(raw)
    ? raw.map((v, i) => [String(i), v])
    : isObj(raw)
      ? Object.entries(raw)
      : [];
  const nodes: ImexNode[] = [];
  for (const [i, [key, v]] of entries.entries()) {
    if (!isObj(v)) continue;
    const index = typeof v.index === "number" ? v.index : /^\d+$/.test(key) ? Number(key) : i;
    const addr = str(v, "host", "ip", "addr", "address", "hostName");
    if (!addr || !Number.isInteger(index)) continue;
    const version = str(v, "version");
    nodes.push({ index, addr, status: str(v, "status", "state") ?? "UNKNOWN", ...(version ? { version } : {}) });
  }
  const domainState = str(data, "status", "domainStatus", "domain_status", "domainState", "domain_state", "state");
  if (!domainState && !nodes.length) throw new Error("nvidia-imex-ctl -N: JSON without a domain status or nodes");
  return { ...(domainState ? { domainState } : {}), nodes: nodes.sort((a, b) => a.index - b.index) };
}

/** Reads `nvidia-imex-ctl -N` as text or as `-N -j` JSON; throws an Error naming the source when it is neither. */
export function parseImexDomain(text: string): ImexDomain {
  if (text.trimStart().startsWith("{")) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return parseText(text); // not JSON after all: an older ctl that ignored -j, or a mangled stream
    }
    return parseJson(data);
  }
  return parseText(text);
}

/**
 * This node's IMEX state from its daemon's own word (`-q`) and its domain's (`-N`). `Domain State: DEGRADED` is what
 * every node of a domain reports while some peer is not READY: that takes out the peer (its own `-q` is not READY,
 * or its agent is silent), not this node, so a READY daemon in a DEGRADED domain stays `ready` (the inventory keeps
 * `domainState`, and placement uses such a domain after healthy ones). Only a domain that is DOWN, or a state this
 * code does not know, overrides a READY daemon. As NVIDIA's own ComputeDomain daemon decides a node's readiness: by
 * `nvidia-imex-ctl -q` alone, "the local IMEX daemon … (not the entire domain)" (NVIDIA/k8s-dra-driver-gpu @ 22407113,
 * cmd/compute-domain-daemon/main.go, check()); the IMEX guide's command service page documents `-q` and `-N`.
 */
export function imexState(query: ImexState, domain?: ImexDomain): ImexState {
  if (query !== "ready" && query !== "degraded") return query;
  const d = domain?.domainState?.toUpperCase();
  if (d === undefined || d === "UP" || d === "DEGRADED") return query;
  return d === "DOWN" ? "down" : "unknown";
}

async function countChannels(dir: string, errors: DiscoveryError[]): Promise<number> {
  try {
    return (await readdir(dir)).filter((n) => /^channel\d+$/.test(n)).length;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT")
      errors.push({ source: dir.slice(0, 64), message: `${dir}: ${code ?? String(e)}`.slice(0, 2048) });
    return 0;
  }
}

/**
 * Asks the local IMEX daemon for its state and its domain's, and counts the IMEX channels; absent daemon is no error.
 */
export async function readImex(opts: {
  ctl?: string;
  channelsDir?: string;
  timeoutMs?: number;
  run?: Runner;
}): Promise<{ imex: Imex; errors: DiscoveryError[] }> {
  const {
    ctl = "nvidia-imex-ctl",
    channelsDir = "/dev/nvidia-caps-imex-channels",
    timeoutMs = 3000,
    run = runCommand,
  } = opts;
  const errors: DiscoveryError[] = [];
  const [channels, q, n] = await Promise.all([
    countChannels(channelsDir, errors),
    run(ctl, ["-q"], timeoutMs),
    run(ctl, ["-N", "-j"], timeoutMs),
  ]);
  const fail = (source: string, message: string) => errors.push({ source, message: message.slice(0, 2048) });
  if (!q.ok) {
    if (q.missing) return { imex: { state: "absent", channels }, errors };
    fail("nvidia-imex-ctl -q", q.error);
    return { imex: { state: "unknown", channels }, errors };
  }
  let query: ImexState;
  try {
    query = parseImexQuery(q.stdout);
  } catch (e) {
    fail("nvidia-imex-ctl -q", (e as Error).message);
    return { imex: { state: "unknown", channels }, errors };
  }
  let domain: ImexDomain | undefined;
  try {
    if (!n.ok) throw new Error(n.error);
    domain = parseImexDomain(n.stdout);
  } catch (e) {
    fail("nvidia-imex-ctl -N -j", (e as Error).message);
  }
  // Peers the daemon cannot reach may carry no version; only versions that are reported have to agree.
  const versions = new Set(domain?.nodes.map((x) => x.version).filter((v) => v !== undefined));
  const version = versions.size === 1 ? [...versions][0]!.slice(0, 64) : undefined;
  const domainState = domain?.domainState?.slice(0, 32);
  return {
    imex: {
      state: imexState(query, domain),
      channels,
      ...(domainState ? { domainState } : {}),
      ...(version ? { version } : {}),
    },
    errors,
  };
}
