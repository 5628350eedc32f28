// The one way discovery runs a command: a timeout, no stdin, and failures turned into one clear sentence.
import { execa } from "execa";

export type RunResult =
  | { ok: true; stdout: string; stderr: string }
  | { ok: false; missing: boolean; error: string; timedOut?: boolean };
export type Runner = (cmd: string, args: string[], timeoutMs: number) => Promise<RunResult>;

/**
 * A runner whose commands see `env` added to this process's environment (the fake nvidia-smi of the tests reads it).
 */
export function runnerWith(env: Record<string, string> = {}): Runner {
  return (cmd, args, timeoutMs) => runIn(env, cmd, args, timeoutMs);
}

/** Runs a command and returns its stdout, or why it could not (missing binary, timeout, exit status, permission). */
export const run: Runner = runnerWith();

async function runIn(env: Record<string, string>, cmd: string, args: string[], timeoutMs: number): Promise<RunResult> {
  try {
    const r = await execa(cmd, args, {
      env,
      timeout: timeoutMs,
      stdin: "ignore",
      reject: true,
      stripFinalNewline: false,
    });
    return { ok: true, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code?: string; timedOut?: boolean; exitCode?: number; stderr?: string; shortMessage?: string };
    const what = `${cmd} ${args.join(" ")}`.trim();
    if (err.code === "ENOENT")
      return { ok: false, missing: true, error: `${what}: not found (is it installed and on PATH?)` };
    if (err.code === "EACCES")
      return { ok: false, missing: false, error: `${what}: permission denied (not executable?)` };
    if (err.timedOut)
      return { ok: false, missing: false, timedOut: true, error: `${what}: no answer within ${timeoutMs} ms` };
    const stderr = (err.stderr ?? "").trim().split("\n")[0];
    return {
      ok: false,
      missing: false,
      error: `${what}: exited with status ${err.exitCode ?? "?"}${stderr ? `: ${stderr}` : ""}`,
    };
  }
}
