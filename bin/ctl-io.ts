// What every `llmgw ctl` command shares: its flags, where it writes and reads (the process's streams, or a caller's),
// and the steps around each command (connect, print a failure, its exit code).
import { readFile } from "node:fs/promises";
import { Agent } from "undici";
import { resolveTarget } from "../agent/ctl/args.js";
import { type CtlClient, createCtlClient } from "../agent/ctl/client.js";
import { CtlError, errorLines, exitCodeOf, UsageError } from "../agent/ctl/errors.js";
import { z } from "../shared/z.js";

export type CtlFlags = { server?: string; token?: string; json?: boolean; caFile?: string };

// the only environment ctl reads
const CtlEnv = z.object({
  LLMGW_SERVER: z.string().optional(),
  LLMGW_TOKEN: z.string().optional(),
  LLMGW_CA_FILE: z.string().optional(),
});

/** The dispatcher that trusts `caFile` (a PEM bundle) for an https:// server; a file it cannot read is a usage error. */
async function caDispatcher(caFile: string | undefined) {
  if (!caFile) return undefined;
  try {
    return new Agent({ connect: { ca: await readFile(caFile, "utf8") } });
  } catch (e) {
    throw new UsageError(
      `--ca-file / LLMGW_CA_FILE: cannot read ${caFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

export type NodesFlags = CtlFlags & { state?: string; pool?: string };
export type ApplyFlags = CtlFlags & { file: string; keepGoing?: boolean };
export type TokenFlags = CtlFlags & { role?: string };
export type JoinFlags = CtlFlags & { name?: string; maxUses?: string; expiresIn?: string };
export type KeyFlags = CtlFlags & { models?: string; rpm?: string; tpm?: string; expiresIn?: string };

/** Where ctl writes and what it reads: the process's own streams and environment, or a caller's (tests, in-process). */
export type CtlIo = {
  out(s: string): void;
  err(s: string): void;
  env: Record<string, string | undefined>;
  stdin: AsyncIterable<Buffer | string> | Iterable<Buffer | string>;
};

export const PROCESS_IO: CtlIo = {
  out: (s) => void process.stdout.write(s),
  err: (s) => void process.stderr.write(s),
  env: process.env,
  // process.stdin is made when first read: only `apply -f -` reads it
  get stdin() {
    return process.stdin;
  },
};

/** The helpers every command uses, over `io`. */
export function ctlHelpers(io: CtlIo) {
  const out = (s: string): void => io.out(s);
  const err = (s: string): void => io.err(s);
  const json = (v: unknown): void => out(`${JSON.stringify(v, null, 2)}\n`);
  const itemsOf = (raw: unknown) => (raw as { items: unknown[] }).items;

  /** A failure on stderr: its first line marked as ctl's, the invalid fields under it. */
  function printError(e: unknown, prefix?: string): void {
    const [first, ...rest] = errorLines(e, prefix);
    err(`llmgw ctl: ${first}\n${rest.map((l) => `${l}\n`).join("")}`);
  }

  /** Connects, runs `body`, and turns any failure into its message on stderr and its exit code. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a command body that returns nothing ended well (exit 0)
  async function run(flags: CtlFlags, body: (c: CtlClient) => Promise<number | void>): Promise<number> {
    try {
      const env = CtlEnv.parse(io.env);
      const target = resolveTarget(flags, env);
      const dispatcher = await caDispatcher(flags.caFile || env.LLMGW_CA_FILE);
      return (await body(createCtlClient({ ...target, dispatcher }))) ?? 0;
    } catch (e) {
      printError(e);
      return exitCodeOf(e);
    }
  }

  /** Reads an apply file, `-` for stdin. */
  async function readSource(file: string): Promise<string> {
    try {
      if (file !== "-") return await readFile(file, "utf8");
      const chunks: Buffer[] = [];
      for await (const c of io.stdin) chunks.push(Buffer.from(c));
      return Buffer.concat(chunks).toString("utf8");
    } catch (e) {
      throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }

  /** Finds a token by id or name in a list; 404 (exit 4) when absent. */
  function pick<T extends { id: string; name: string | null }>(
    items: T[],
    raw: unknown[],
    key: string,
    what: string,
  ): unknown {
    const i = items.findIndex((t) => t.id === key || t.name === key);
    if (i < 0) throw new CtlError(404, `no ${what} ${key}`);
    return raw[i];
  }

  return { out, err, json, itemsOf, printError, run, readSource, pick };
}
export type CtlHelpers = ReturnType<typeof ctlHelpers>;
