import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
/** The built CLI (test/helpers/build.ts builds it before the tests run). */
export const LLMGW = join(ROOT, "dist", "llmgw.js");

export type Proc = {
  child: ChildProcess;
  output: () => string;
  waitFor: (re: RegExp, ms?: number) => Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
};

const running = new Set<ChildProcess>();

/** Kills every process a test started and left running (a failed test must not leak servers). */
export async function killAll(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once("exit", () => done());
          child.kill("SIGKILL");
        }),
    ),
  );
  running.clear();
}

/** Starts a process, collecting stdout and stderr together. */
export function start(cmd: string, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Proc {
  const child = spawn(cmd, args, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let out = "";
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<number | null>((ok) =>
    child.on("exit", (code) => {
      ok(code);
      for (const w of waiters) w();
    }),
  );
  const waitFor = (re: RegExp, ms = 20_000) =>
    new Promise<RegExpMatchArray>((ok, fail) => {
      const deadline = setTimeout(
        () => done(new Error(`timed out after ${ms} ms waiting for ${re}; output so far:\n${out}`)),
        ms,
      );
      const check = () => {
        const m = out.match(re);
        if (m) done(undefined, m);
        else if (child.exitCode !== null)
          done(new Error(`process exited (${child.exitCode}) before ${re}; output:\n${out}`));
      };
      const done = (err?: Error, m?: RegExpMatchArray) => {
        clearTimeout(deadline);
        waiters.delete(check);
        if (err) fail(err);
        else ok(m!);
      };
      waiters.add(check);
      check();
    });
  return { child, output: () => out, waitFor, exited };
}

/** Runs `llmgw <args>` to completion and returns its exit code and output. */
export async function runLlmgw(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}) {
  const p = start(process.execPath, [LLMGW, ...args], opts);
  const code = await p.exited;
  return { code, output: p.output() };
}

/** Starts `llmgw serve` on a free port and waits until it prints its URL. */
export async function startServe(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}) {
  const p = start(process.execPath, [LLMGW, "serve", "--port", "0", ...args], opts);
  const m = await p.waitFor(/serving on (https?:\/\/[^\s]+)/);
  return { ...p, url: m[1]! };
}

/** Sends SIGTERM and waits for the exit code. */
export async function stop(p: Proc): Promise<number | null> {
  if (p.child.exitCode !== null) return p.child.exitCode;
  p.child.kill("SIGTERM");
  return p.exited;
}

export { freePort, freePortBlock } from "../../agent/sim/free-port.js";

/** Polls `fn` until it returns true, failing after `ms`. */
export async function until(fn: () => Promise<boolean>, ms = 20_000, what = "condition"): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await fn()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A JSON caller of a real server's API with `token` unless another is given; an empty body (204) reads as undefined.
 */
export function apiCaller(url: string, token: string) {
  return async (method: string, path: string, body?: unknown, as = token) => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    // biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON field by field
    return { status: r.status, headers: r.headers, body: (text ? JSON.parse(text) : undefined) as any };
  };
}
