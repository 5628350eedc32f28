// agent.yaml `run_as`: the user and group engines run as, resolved once at start from /etc/passwd and /etc/group
// (numeric ids are taken as they are). Only root can start a process as another user.
import { readFile } from "node:fs/promises";

export type RunAsSpec = { user: string; group?: string };
/** Who engines run as: ids for spawn, and the user's name and home for their environment. */
export type RunAs = { uid: number; gid: number; user: string; home: string };

type PasswdEntry = { name: string; uid: number; gid: number; home: string };

/** The entries of an /etc/passwd text (malformed lines are skipped). */
export function parsePasswd(text: string): PasswdEntry[] {
  return text.split("\n").flatMap((line) => {
    const f = line.split(":");
    if (f.length < 7 || line.startsWith("#")) return [];
    const uid = Number(f[2]);
    const gid = Number(f[3]);
    return Number.isInteger(uid) && Number.isInteger(gid) ? [{ name: f[0]!, uid, gid, home: f[5]! }] : [];
  });
}

/** The entries of an /etc/group text: name and gid. */
export function parseGroups(text: string): { name: string; gid: number }[] {
  return text.split("\n").flatMap((line) => {
    const f = line.split(":");
    if (f.length < 3 || line.startsWith("#")) return [];
    const gid = Number(f[2]);
    return Number.isInteger(gid) ? [{ name: f[0]!, gid }] : [];
  });
}

const numeric = (s: string) => (/^[0-9]+$/.test(s) ? Number(s) : undefined);

/** Resolves `spec` against passwd and group texts; throws an Error naming the key when a name is unknown. */
export function resolveRunAs(spec: RunAsSpec, passwd: string, group: string): RunAs {
  const users = parsePasswd(passwd);
  const n = numeric(spec.user);
  const u = users.find((e) => (n === undefined ? e.name === spec.user : e.uid === n));
  if (!u && n === undefined) throw new Error(`agent.yaml run_as.user: no user ${spec.user} in /etc/passwd`);
  let gid = u?.gid;
  if (spec.group !== undefined) {
    gid = numeric(spec.group) ?? parseGroups(group).find((g) => g.name === spec.group)?.gid;
    if (gid === undefined) throw new Error(`agent.yaml run_as.group: no group ${spec.group} in /etc/group`);
  }
  if (gid === undefined)
    throw new Error(`agent.yaml run_as: uid ${spec.user} has no /etc/passwd entry: give run_as.group as well`);
  return { uid: u?.uid ?? n!, gid, user: u?.name ?? spec.user, home: u?.home ?? "/" };
}

/** Reads /etc/passwd and /etc/group and resolves `spec`. */
export async function loadRunAs(spec: RunAsSpec, files = { passwd: "/etc/passwd", group: "/etc/group" }) {
  const [passwd, group] = await Promise.all([
    readFile(files.passwd, "utf8"),
    readFile(files.group, "utf8").catch(() => ""),
  ]);
  return resolveRunAs(spec, passwd, group);
}

/** The line the agent logs at start about run_as: who engines run as, and plainly when that cannot work. */
export function runAsNotice(r: RunAs, agent: { uid: number; gid: number }): string {
  const who = `engines run as ${r.user} (uid ${r.uid}, gid ${r.gid})`;
  if (agent.uid === 0 || (agent.uid === r.uid && agent.gid === r.gid)) return `run_as: ${who}`;
  return `run_as: ${who}, but the agent is not root (uid ${agent.uid}): only root can start processes as another user, so every engine start will fail; run the agent as root or remove run_as from agent.yaml`;
}

/** The environment that goes with the user (its own HOME, USER, LOGNAME, not the agent's). */
export const runAsEnv = (r: RunAs): Record<string, string> => ({ HOME: r.home, USER: r.user, LOGNAME: r.user });
