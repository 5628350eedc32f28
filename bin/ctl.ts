// `llmgw ctl`: the operator's commands over the control API (tokens and keys in ctl-secrets.ts, what they share in
// ctl-io.ts). Each returns its exit code (docs/operations.md).
import { kindOf } from "../agent/ctl/args.js";
import { CtlError, exitCodeOf, UsageError } from "../agent/ctl/errors.js";
import { formatLogs, formatNode, formatNodes, formatPlan, formatReplicas, formatStatus } from "../agent/ctl/format.js";
import { formatNvlink } from "../agent/ctl/format-nvlink.js";
import {
  formatAdminTokens,
  formatApiKeys,
  formatApplied,
  formatDeployments,
  formatJoinTokens,
  formatModels,
} from "../agent/ctl/format-resources.js";
import { type ApplyFlags, type CtlFlags, type CtlIo, ctlHelpers, type NodesFlags, PROCESS_IO } from "./ctl-io.js";
import { secretCommands } from "./ctl-secrets.js";

/** ctl's commands, writing to and reading from `io`; each returns its exit code. */
export function ctlCommands(io: CtlIo = PROCESS_IO) {
  const h = ctlHelpers(io);
  const { out, json, itemsOf, printError, run, readSource, pick } = h;
  return {
    ...secretCommands(h),
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

    /** `logs REPLICA[/SHARD]`: each shard's last failure and its engine log's last lines. */
    logs: (target: string, f: CtlFlags) =>
      run(f, async (c) => {
        const [replica, shard] = target.split("/", 2) as [string, string | undefined];
        const a = await c.replicaLogs(replica);
        f.json ? json(a.raw) : out(formatLogs(a.data, shard));
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
  };
}

export type { CtlIo } from "./ctl-io.js";
