// Starting and stopping engine processes. Engines run detached in their own session (so they outlive the agent and
// a systemd restart of it with KillMode=process), their output going straight to the shard's log file.

import { closeSync, fchownSync, openSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import { dirname } from "node:path";
import { execa } from "execa";
import { isSameProcess, procStat } from "./proc.js";
import { type RunAs, runAsEnv } from "./run-as.js";

export type Exit = { exitCode: number | null; signal: string | null; message: string };
export type Spawned = { pid: number; startTime: number; exited: Promise<Exit> };

/**
 * Starts argv detached with env added to the agent's own (as agent.yaml run_as's user when given); throws an Error
 * saying why it could not start.
 */
export async function spawnEngine(
  argv: string[],
  env: Record<string, string>,
  log: string,
  runAs?: RunAs,
): Promise<Spawned> {
  await mkdir(dirname(log), { recursive: true, mode: 0o700 });
  // the engine gets the file itself (not a pipe through the agent), so its output does not depend on the agent
  const fd = openSync(log, "a", 0o600) as 3; // execa's types list only small literal descriptors; any open one works
  // the log is the engine's (it may reopen it as /proc/self/fd/1); the logs directory stays the agent's alone, so the
  // engine's user cannot put a link there for the agent's rotation to follow
  if (runAs) {
    try {
      fchownSync(fd, runAs.uid, runAs.gid);
    } catch (e) {
      closeSync(fd);
      throw runAsError(argv[0]!, runAs, e instanceof Error ? e.message : String(e));
    }
  }
  const child = execa(argv[0]!, argv.slice(1), {
    env: runAs ? { ...runAsEnv(runAs), ...env } : env,
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    detached: true,
    cleanup: false,
    reject: false,
    buffer: false,
    stdin: "ignore",
    stdout: fd,
    stderr: fd,
  });
  closeSync(fd);
  const exited = child.then((r): Exit => {
    const why = r.signal ? `killed by ${r.signal}` : `exited with status ${r.exitCode}`;
    return {
      exitCode: r.exitCode ?? null,
      signal: r.signal ?? null,
      message: r.failed && r.exitCode === undefined && !r.signal ? (r.shortMessage ?? why) : why,
    };
  });
  if (child.pid === undefined) {
    const e = await exited;
    if (runAs && /EPERM/.test(e.message)) throw runAsError(argv[0]!, runAs, e.message);
    throw new Error(
      /ENOENT/.test(e.message) ? `${argv[0]}: not found (is the engine installed and on PATH?)` : e.message,
    );
  }
  child.unref();
  const stat = procStat(child.pid);
  if (!stat) {
    const e = await exited;
    throw new Error(`${argv[0]} ${e.message} at once`);
  }
  return { pid: child.pid, startTime: stat.startTime, exited };
}

const runAsError = (program: string, r: RunAs, why: string) =>
  new Error(
    `${program}: cannot start as ${r.user} (uid ${r.uid}, gid ${r.gid}): ${why} (agent.yaml run_as needs the agent to run as root)`,
  );

/** Sends a signal to the engine's whole process group (engines fork workers), if it is still the same process. */
export function signalGroup(pid: number, startTime: number, signal: NodeJS.Signals): boolean {
  if (!isSameProcess(pid, startTime)) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/** Stops an engine: SIGTERM to its group, SIGKILL after `graceMs`; resolves once it is gone. */
export async function stopEngine(pid: number, startTime: number, graceMs: number, pollMs = 100): Promise<void> {
  if (!signalGroup(pid, startTime, "SIGTERM")) return;
  const end = Date.now() + graceMs;
  while (isSameProcess(pid, startTime)) {
    if (Date.now() >= end) {
      signalGroup(pid, startTime, "SIGKILL");
      break;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  while (isSameProcess(pid, startTime)) await new Promise((r) => setTimeout(r, pollMs));
}

/** True when nothing listens on host:port (the engine would fail to bind otherwise). */
export function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((ok) => {
    const s = createServer();
    s.once("error", () => ok(false));
    s.listen({ host, port, exclusive: true }, () => s.close(() => ok(true)));
  });
}
