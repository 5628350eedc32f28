// Who this node is and how to reach the control plane: agent.yaml, overridden by flags, with defaults from the host.
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { networkInterfaces, hostname as osHostname } from "node:os";
import { join } from "node:path";
import type { AgentConfig } from "./config.js";

export type Identity = { server: string; nodeId: string; hostname: string; mgmtAddr: string; mgmtInterface?: string };
export type IdentityFlags = { server?: string; nodeId?: string; mgmtAddr?: string };

type Interfaces = ReturnType<typeof networkInterfaces>;

/** The first IPv4 address of `iface`, or of any interface that is up and not loopback. */
export function addressOf(ifaces: Interfaces, iface?: string): string | undefined {
  const names = iface ? [iface] : Object.keys(ifaces).sort();
  for (const name of names) {
    const a = (ifaces[name] ?? []).find((x) => x.family === "IPv4" && !x.internal);
    if (a) return a.address;
  }
  return undefined;
}

/** A node id from a host name: the first label, lower-cased, with anything outside [a-z0-9._-] replaced. */
export const nodeIdFromHostname = (h: string) =>
  h
    .split(".")[0]!
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 63) || "node";

const isHttpUrl = (s: string) => {
  try {
    return ["http:", "https:"].includes(new URL(s).protocol);
  } catch {
    return false;
  }
};

/** Resolves the identity, or throws an Error listing what is missing (or not a usable control-plane URL). */
export function resolveIdentity(
  cfg: AgentConfig,
  flags: IdentityFlags,
  ifaces: Interfaces = networkInterfaces(),
  host = osHostname(),
): Identity {
  const server = flags.server ?? cfg.server;
  const mgmtAddr = flags.mgmtAddr ?? cfg.mgmtAddr ?? addressOf(ifaces, cfg.mgmtInterface);
  const missing = [
    !server && "no control plane: set `server` in agent.yaml or pass --server URL",
    server && !isHttpUrl(server) && `server ${JSON.stringify(server)} is not an http:// or https:// URL`,
    !mgmtAddr &&
      (cfg.mgmtInterface
        ? `interface ${cfg.mgmtInterface} has no IPv4 address: set mgmt_addr or pass --mgmt-addr`
        : "no management address found: set mgmt_addr or pass --mgmt-addr"),
  ].filter(Boolean);
  if (missing.length) throw new Error(missing.join("; "));
  return {
    server: server!,
    nodeId: flags.nodeId ?? cfg.nodeId ?? nodeIdFromHostname(host),
    hostname: cfg.hostname ?? host,
    mgmtAddr: mgmtAddr!,
    ...(cfg.mgmtInterface ? { mgmtInterface: cfg.mgmtInterface } : {}),
  };
}

const tokenPath = (stateDir: string) => join(stateDir, "node-token");

/** The node token saved at an earlier registration, if any. */
export async function readNodeToken(stateDir: string): Promise<string | undefined> {
  try {
    return (await readFile(tokenPath(stateDir), "utf8")).trim() || undefined;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** Saves the node token, readable by the agent's user only (mode 0600), atomically. */
export async function saveNodeToken(stateDir: string, token: string): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeFile(`${tokenPath(stateDir)}.tmp`, `${token}\n`, { mode: 0o600 });
  await rename(`${tokenPath(stateDir)}.tmp`, tokenPath(stateDir));
}

/** The join token from agent.yaml or its file, if configured. */
export async function readJoinToken(
  cfg: Pick<AgentConfig, "joinToken" | "joinTokenFile">,
): Promise<string | undefined> {
  if (cfg.joinToken) return cfg.joinToken;
  if (!cfg.joinTokenFile) return undefined;
  return (await readFile(cfg.joinTokenFile, "utf8")).trim() || undefined;
}
