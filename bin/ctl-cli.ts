// The `llmgw ctl` commands as Commander defines them: their flags, help and exit codes. bin/llmgw.ts adds them to the
// CLI (ctl.ts itself loads only when a ctl command runs); runCtl() runs one in this process, with the caller's streams.
import { Command, Option } from "commander";
import type { CtlIo, ctlCommands } from "./ctl.js";

type Commands = ReturnType<typeof ctlCommands>;
type Pick = (c: Commands) => Promise<number>;

/** How a ctl run ends: `done` with the command's exit code, `usage` for a bad flag or argument (and for --help: 0). */
export type CtlExit = { done(code: number): void; usage(code: number): never };

/** The process's ending: the exit code kept for when the event loop empties; a usage error exits at once. */
export const PROCESS_EXIT: CtlExit = {
  done: (code) => {
    process.exitCode = code;
  },
  usage: (code) => process.exit(code),
};

/** The options every ctl command takes, after its name or before it (`llmgw ctl --server URL nodes`). */
const withCommonOptions = (c: Command) =>
  c
    .option("--server <url>", "control plane URL (env LLMGW_SERVER, default http://127.0.0.1:8080)")
    .option("--token <token>", "admin token (env LLMGW_TOKEN; the variable keeps it out of `ps`)")
    .option("--json", "print the API's JSON instead of a table")
    .option("--ca-file <pem>", "CA certificate(s) that signed an https:// server's certificate (env LLMGW_CA_FILE)");

/** A `llmgw ctl` command with the options every one takes. */
const ctlCommand = (parent: Command, nameAndArgs: string, description: string, opts: { isDefault?: boolean } = {}) =>
  withCommonOptions(parent.command(nameAndArgs, opts).description(description));

/** Adds `ctl` and its subcommands to `program`; `load` runs a picked command (loading ctl.ts when it must). */
export function addCtlCommands(program: Command, load: (pick: Pick) => Promise<number>, exit: CtlExit): void {
  const ctlRun = async (pick: Pick) => exit.done(await load(pick));
  const ctl = withCommonOptions(
    program
      .command("ctl")
      .description(
        "Operate the fleet through the control API: nodes, status, plan, apply, get, delete, cordon, drain, tokens, API keys",
      )
      // every usage error of ctl (unknown option, missing argument, unknown command) exits 2; subcommands inherit this
      .exitOverride((e) => exit.usage(e.exitCode === 0 ? 0 : 2))
      // options after a command's name are its own; those before it (on ctl) fill in what it was not given
      .enablePositionalOptions(),
  )
    .hook("preAction", (self, action) => {
      for (const [k, v] of Object.entries(self.opts()))
        if (action.getOptionValue(k) === undefined) action.setOptionValue(k, v);
    })
    .addHelpText(
      "after",
      `
Every command talks to the control API at --server / LLMGW_SERVER (default http://127.0.0.1:8080) with the admin
token of --token / LLMGW_TOKEN. --json prints what the API answered (status: {deployments, replicas, devices}; apply:
{applied, failed}; delete and revoke: {kind, name, deleted}); without it, tables for people. New secrets (tokens
create, tokens join, keys create, keys rotate) are printed alone on stdout, the note about them on stderr.

Exit status: 0 ok, 1 the API refused (its problem's detail on stderr) or answered badly, 2 usage (bad flag, argument
or file; nothing was sent), 3 the server cannot be reached, 4 not found (404). See docs/operations.md.`,
    );

  ctlCommand(ctl, "nodes", "Nodes: id, state, pool, devices by class, last seen")
    .addOption(
      new Option("--state <state>", "only nodes in this state").choices(["ready", "cordoned", "draining", "lost"]),
    )
    .option("--pool <pool>", "only nodes of this pool")
    .action((f) => ctlRun((c) => c.nodes(f)));
  ctlCommand(ctl, "node <id>", "One node: state, GPUs (MIG, health, NVLink fabric), placeable devices, shards").action(
    (id, f) => ctlRun((c) => c.node(id, f)),
  );
  ctlCommand(
    ctl,
    "status",
    "Deployments (desired / placed / ready, why the rest is pending), replicas (state, endpoint, shards) and devices by class",
  )
    .option("--deployment <name>", "only this deployment and its replicas")
    .action((f) => ctlRun((c) => c.status(f)));
  ctlCommand(
    ctl,
    "logs <replica>",
    "A replica's last failure per shard (exit code or signal, how long it ran) and its engine log's last 20 lines; <replica>/<shard> for one shard",
  ).action((target, f) => ctlRun((c) => c.logs(target, f)));
  ctlCommand(
    ctl,
    "plan",
    "Devices by class (total, free, used, unavailable and why) and how many more replicas of each profile fit",
  ).action((f) => ctlRun((c) => c.plan(f)));
  ctlCommand(
    ctl,
    "nvlink",
    "NVLink domains: trays in order, each GPU joined or why not, IMEX, and every reason a tray is out of placement",
  ).action((f) => ctlRun((c) => c.nvlink(f)));
  ctlCommand(
    ctl,
    "apply",
    "Create or replace models, deployments and API keys from a YAML or JSON file (PUT: idempotent)",
  )
    .requiredOption("-f, --file <path>", "the file, - for stdin")
    .option("--keep-going", "apply the rest after a failure (the exit status is still the first failure's)")
    .addHelpText(
      "after",
      `
The file holds objects {kind, name, spec}: kind Model, Deployment or ApiKey; spec exactly as the API's PUT takes it.
One object, a list of them, or several YAML documents separated by ---, applied in order. Each prints created,
updated or unchanged (a created API key also prints its secret, once). The first failure stops the run (exit 1, or
4/3) unless --keep-going; objects applied before it stay applied. A malformed file applies nothing (exit 2).

  kind: Model
  name: llama-8b
  spec: {weightsPath: /models/llama-3.1-8b, profiles: [{name: one-h100, engine: vllm, gpuClass: h100-80g}]}
  ---
  kind: Deployment
  name: chat
  spec: {model: llama-8b, replicas: 2, pool: prod}`,
    )
    .action((f) => ctlRun((c) => c.apply(f)));
  ctlCommand(
    ctl,
    "get <kind> [name]",
    "List a kind as a table, or show one object as YAML: models, deployments, replicas, nodes, api-keys, tokens, join-tokens",
  ).action((kind, name, f) => ctlRun((c) => c.get(kind, name, f)));
  ctlCommand(
    ctl,
    "delete <kind> <name>",
    "Delete a model, deployment, API key, node (forget it), admin token or join token (by id)",
  ).action((kind, name, f) => ctlRun((c) => c.delete(kind, name, f)));
  for (const [verb, what] of [
    ["cordon", "Cordon a node: no new placements on it"],
    ["uncordon", "Uncordon a node: placements may use it again"],
    ["drain", "Drain a node: move its replicas away, then keep it cordoned"],
  ] as const) {
    ctlCommand(ctl, `${verb} <node>`, what).action((id, f) => ctlRun((c) => c.nodeAction(verb, id, f)));
  }

  const ctlTokens = ctl.command("tokens").description("Admin tokens and join tokens (list, create, join, revoke)");
  ctlCommand(
    ctlTokens,
    "list",
    "List admin tokens (the default; never their secrets); `get join-tokens` lists join tokens",
    { isDefault: true },
  ).action((f) => ctlRun((c) => c.tokens(f)));
  ctlCommand(ctlTokens, "create <name>", "Create an admin token; the token is printed once")
    .option("--role <role>", "admin (everything, the default), operator (fleet, no credentials) or viewer (read only)")
    .action((name, f) => ctlRun((c) => c.tokenCreate(name, f)));
  ctlCommand(ctlTokens, "join", "Create a join token that lets agents register new nodes; the token is printed once")
    .option("--name <name>", "a name to recognise it by")
    .option("--max-uses <n>", "how many registrations it allows (unlimited by default)")
    .option("--expires-in <duration>", "lifetime: 3600, 90s, 15m, 24h or 7d (none by default)")
    .action((f) => ctlRun((c) => c.tokenJoin(f)));
  ctlCommand(ctlTokens, "revoke <id>", "Revoke an admin token (tok_…) or a join token (join_…)").action((id, f) =>
    ctlRun((c) => c.tokenRevoke(id, f)),
  );

  const ctlKeys = ctl
    .command("keys")
    .description("API keys for the OpenAI-compatible endpoints (list, create, rotate, delete)");
  ctlCommand(ctlKeys, "list", "List API keys (the default; never their secrets)", { isDefault: true }).action((f) =>
    ctlRun((c) => c.keys(f)),
  );
  ctlCommand(ctlKeys, "create <name>", "Create an API key (never replaces one); its secret is printed once")
    .option("--models <a,b>", "served model names it may use (every model when absent, none when empty)")
    .option("--rpm <n>", "requests per minute, per API instance")
    .option("--tpm <n>", "prompt + completion tokens per minute, per API instance")
    .option("--expires-in <duration>", "refused from this long from now: 3600, 90s, 15m, 24h or 7d")
    .action((name, f) => ctlRun((c) => c.keyCreate(name, f)));
  ctlCommand(ctlKeys, "rotate <name>", "Give an API key a new secret, printed once; the old one stops working").action(
    (name, f) => ctlRun((c) => c.keyRotate(name, f)),
  );
  ctlCommand(ctlKeys, "delete <name>", "Delete an API key").action((name, f) => ctlRun((c) => c.keyDelete(name, f)));
}

/** Runs `llmgw ctl <args…>` in this process with `io` for its streams and environment; resolves to its exit code. */
export async function runCtl(args: string[], io: CtlIo): Promise<number> {
  const { ctlCommands } = await import("./ctl.js");
  class UsageExit {
    constructor(readonly code: number) {}
  }
  let code = 0;
  const program = new Command("llmgw")
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  const exit: CtlExit = {
    done: (c) => {
      code = c;
    },
    usage: (c) => {
      throw new UsageExit(c);
    },
  };
  addCtlCommands(program, (pick) => pick(ctlCommands(io)), exit);
  try {
    await program.parseAsync(["ctl", ...args], { from: "user" });
  } catch (e) {
    if (e instanceof UsageExit) return e.code;
    throw e;
  }
  return code;
}
