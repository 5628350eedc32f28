// `llmgw ctl`: the operator's commands over the control API. Each returns its exit code (docs/operations.md).
import { readFile } from "node:fs/promises";
import { commaList, durationS, kindOf, positiveInt, resolveTarget } from "../agent/ctl/args.js";
import { type CtlClient, createCtlClient } from "../agent/ctl/client.js";
import { CtlError, errorLines, exitCodeOf, UsageError } from "../agent/ctl/errors.js";
import { formatNode, formatNodes, formatPlan, formatReplicas, formatStatus } from "../agent/ctl/format.js";
import { formatNvlink } from "../agent/ctl/format-nvlink.js";
import {
  formatAdminTokens,
  formatApiKeys,
  formatApplied,
  formatDeployments,
  formatJoinTokens,
  formatModels,
  secretOutput,
} from "../agent/ctl/format-resources.js";
import { z } from "../shared/z.js";

export type CtlFlags = { server?: string; token?: string; json?: boolean };

// the only environment ctl reads
const CtlEnv = z.object({ LLMGW_SERVER: z.string().optional(), LLMGW_TOKEN: z.string().optional() });

export type NodesFlags = CtlFlags & { state?: string; pool?: string };
export type ApplyFlags = CtlFlags & { file: string; keepGoing?: boolean };
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

/** ctl's commands, writing to and reading from `io`; each returns its exit code. */
export function ctlCommands(io: CtlIo = PROCESS_IO) {
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
      const target = resolveTarget(flags, CtlEnv.parse(io.env));
      return (await body(createCtlClient(target))) ?? 0;
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

  return {
    /** `nodes`: one line a node. */
    nodes: (f: NodesFlags) =>
      run(f, async (c) => {
        const a = await c.listNodes({ state: f.state, pool: f.pool });
        f.json ? json(a.raw) : out(formatNodes(a.data.items, Date.now()));
      }),

    /** `node ID`: one node in detail. */
    node: (id: string, f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.getNode(id);
        f.json ? json(a.raw) : out(formatNode(a.data, Date.now()));
      }),

    /** `status`: deployments, replicas and devices by class. */
    status: (f: CtlFlags & { deployment?: string }) =>
      run(f, async (c) => {
        const [d, r, p] = await Promise.all([
          f.deployment
            ? c
                .getDeclared("Deployment", f.deployment)
                .then((a) => ({ ...a, raw: { items: [a.raw] }, data: { items: [a.data] } }))
            : c.listDeclared("Deployment"),
          c.listReplicas(f.deployment),
          c.plan(),
        ]);
        f.json
          ? json({ deployments: itemsOf(d.raw), replicas: itemsOf(r.raw), devices: p.data.classes })
          : out(formatStatus(d.data.items, r.data.items, p.data.classes));
      }),

    /** `plan`: capacity by class and what more fits. */
    plan: (f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.plan();
        f.json ? json(a.raw) : out(formatPlan(a.data));
      }),

    /** `nvlink`: domains, trays, GPUs joined or not, and why trays are out. */
    nvlink: (f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.nvlink();
        f.json ? json(a.raw) : out(formatNvlink(a.data));
      }),

    /** `apply -f FILE`: PUT every object in the file, in order. */
    apply: (f: ApplyFlags) =>
      run(f, async (c) => {
        // the YAML parser loads only for the commands that need it
        const [{ parseApplyFile }, { applyAll }] = await Promise.all([
          import("../agent/ctl/apply-file.js"),
          import("../agent/ctl/apply.js"),
        ]);
        const docs = parseApplyFile(await readSource(f.file), f.file === "-" ? "stdin" : f.file);
        const r = await applyAll(c, docs, {
          keepGoing: !!f.keepGoing,
          onApplied: (a) => f.json || out(formatApplied(a, a.outcome, a.secret)),
          onFailed: (x) => printError(x.error, x.ref),
        });
        if (f.json) {
          json({
            applied: r.applied.map((a) => ({ kind: a.kind, name: a.name, outcome: a.outcome, object: a.object })),
            failed: r.failed.map((x) => ({
              kind: x.kind,
              name: x.name,
              status: x.error instanceof CtlError ? x.error.status : 0,
              message: x.error instanceof Error ? x.error.message : String(x.error),
              ...(x.error instanceof CtlError && x.error.problem ? { problem: x.error.problem } : {}),
            })),
          });
        }
        return r.failed.length ? exitCodeOf(r.failed[0]!.error) : 0;
      }),

    /** `get KIND [NAME]`: a list as a table, one object as YAML; `--json` as the API answered. */
    get: (kindWord: string, name: string | undefined, f: CtlFlags) =>
      run(f, async (c) => {
        const kind = kindOf(kindWord);
        const now = Date.now();
        const one = async (a: Promise<{ raw: unknown }>) => {
          const raw = (await a).raw;
          f.json ? json(raw) : out((await import("yaml")).stringify(raw));
        };
        switch (kind) {
          case "models":
            if (name) return one(c.getDeclared("Model", name));
            return c.listDeclared("Model").then((a) => (f.json ? json(a.raw) : out(formatModels(a.data.items))));
          case "deployments":
            if (name) return one(c.getDeclared("Deployment", name));
            return c
              .listDeclared("Deployment")
              .then((a) => (f.json ? json(a.raw) : out(formatDeployments(a.data.items))));
          case "api-keys":
            if (name) return one(c.getDeclared("ApiKey", name));
            return c.listDeclared("ApiKey").then((a) => (f.json ? json(a.raw) : out(formatApiKeys(a.data.items, now))));
          case "replicas":
            if (name) return one(c.getReplica(name));
            return c.listReplicas().then((a) => (f.json ? json(a.raw) : out(formatReplicas(a.data.items))));
          case "nodes":
            if (name) return c.getNode(name).then((a) => (f.json ? json(a.raw) : out(formatNode(a.data, now))));
            return c.listNodes().then((a) => (f.json ? json(a.raw) : out(formatNodes(a.data.items, now))));
          case "tokens": {
            const a = await c.listAdminTokens();
            if (name) return one(Promise.resolve({ raw: pick(a.data.items, itemsOf(a.raw), name, "admin token") }));
            return void (f.json ? json(a.raw) : out(formatAdminTokens(a.data.items, now)));
          }
          case "join-tokens": {
            const a = await c.listJoinTokens();
            if (name) return one(Promise.resolve({ raw: pick(a.data.items, itemsOf(a.raw), name, "join token") }));
            return void (f.json ? json(a.raw) : out(formatJoinTokens(a.data.items, now)));
          }
        }
      }),

    /** `delete KIND NAME`. */
    delete: (kindWord: string, name: string, f: CtlFlags) =>
      run(f, async (c) => {
        const kind = kindOf(kindWord);
        const calls = {
          models: () => c.deleteDeclared("Model", name),
          deployments: () => c.deleteDeclared("Deployment", name),
          "api-keys": () => c.deleteDeclared("ApiKey", name),
          nodes: () => c.deleteNode(name),
          tokens: () => c.deleteAdminToken(name),
          "join-tokens": () => c.deleteJoinToken(name),
          replicas: () => {
            throw new UsageError("replicas are not deleted: change or delete their deployment");
          },
        } as const;
        await calls[kind]();
        f.json ? json({ kind, name, deleted: true }) : out(`${kind.replace(/s$/, "")} ${name} deleted\n`);
      }),

    /** `cordon|uncordon|drain NODE`. */
    nodeAction: (verb: "cordon" | "uncordon" | "drain", id: string, f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.nodeAction(id, verb);
        f.json ? json(a.raw) : out(`node ${a.data.id}: ${a.data.state}\n`);
      }),

    /** `tokens [list]`: admin tokens. */
    tokens: (f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.listAdminTokens();
        f.json ? json(a.raw) : out(formatAdminTokens(a.data.items, Date.now()));
      }),

    /** `tokens create NAME`: a new admin token, printed once. */
    tokenCreate: (name: string, f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.createAdminToken(name);
        if (f.json) return void json(a.raw);
        const s = secretOutput(`admin token ${a.data.name} (${a.data.id}) created`, a.data.token);
        out(s.stdout);
        err(s.stderr);
      }),

    /** `tokens join`: a new join token for agents, printed once. */
    tokenJoin: (f: JoinFlags) =>
      run(f, async (c) => {
        const req = {
          ...(f.name ? { name: f.name } : {}),
          ...(f.maxUses !== undefined ? { maxUses: positiveInt(f.maxUses, "--max-uses") } : {}),
          ...(f.expiresIn !== undefined ? { expiresInS: durationS(f.expiresIn, "--expires-in") } : {}),
        };
        const a = await c.createJoinToken(req);
        if (f.json) return void json(a.raw);
        const t = a.data;
        const limits = [
          t.maxUses === null ? "unlimited uses" : `${t.maxUses} use(s)`,
          t.expiresAt === null ? "no expiry" : `expires ${new Date(t.expiresAt).toISOString()}`,
        ];
        const s = secretOutput(
          `join token ${t.name ?? ""}${t.name ? " " : ""}(${t.id}) created: ${limits.join(", ")}`,
          t.token,
        );
        out(s.stdout);
        err(s.stderr);
      }),

    /** `tokens revoke ID`: an admin token (`tok_…`) or a join token (`join_…`). */
    tokenRevoke: (id: string, f: CtlFlags) =>
      run(f, async (c) => {
        const isJoin = id.startsWith("join_");
        await (isJoin ? c.deleteJoinToken(id) : c.deleteAdminToken(id));
        f.json
          ? json({ kind: isJoin ? "join-tokens" : "tokens", name: id, deleted: true })
          : out(`${isJoin ? "join" : "admin"} token ${id} revoked\n`);
      }),

    /** `keys [list]`: API keys. */
    keys: (f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.listDeclared("ApiKey");
        f.json ? json(a.raw) : out(formatApiKeys(a.data.items, Date.now()));
      }),

    /** `keys create NAME`: a new API key (never replaces one), its secret printed once. */
    keyCreate: (name: string, f: KeyFlags) =>
      run(f, async (c) => {
        const spec = {
          ...(f.models !== undefined ? { models: commaList(f.models) } : {}),
          ...(f.rpm !== undefined ? { requestsPerMinute: positiveInt(f.rpm, "--rpm") } : {}),
          ...(f.tpm !== undefined ? { tokensPerMinute: positiveInt(f.tpm, "--tpm") } : {}),
          ...(f.expiresIn !== undefined
            ? { expiresAt: Date.now() + durationS(f.expiresIn, "--expires-in") * 1000 }
            : {}),
        };
        const a = await c.putDeclared("ApiKey", name, spec, { "if-none-match": "*" });
        if (f.json) return void json(a.raw);
        const secret = a.data.secret;
        if (!secret)
          throw new CtlError(
            a.status,
            `the server created API key ${name} without showing its secret; run \`llmgw ctl keys rotate ${name}\``,
          );
        const s = secretOutput(`API key ${name} created`, secret);
        out(s.stdout);
        err(s.stderr);
      }),

    /** `keys rotate NAME`: a new secret, printed once; the old one stops working. */
    keyRotate: (name: string, f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.rotateApiKey(name);
        if (f.json) return void json(a.raw);
        const s = secretOutput(`API key ${name} has a new secret; the old one no longer works`, a.data.secret);
        out(s.stdout);
        err(s.stderr);
      }),

    /** `keys delete NAME`. */
    keyDelete: (name: string, f: CtlFlags) =>
      run(f, async (c) => {
        await c.deleteDeclared("ApiKey", name);
        f.json ? json({ kind: "api-keys", name, deleted: true }) : out(`API key ${name} deleted\n`);
      }),
  };
}
