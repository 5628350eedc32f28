// The one CLI entry: parses the subcommand and lazily imports the part it needs.
import { Command, Option } from "commander";
import { VERSION } from "../shared/version.js";

const program = new Command("llmgw")
  .description("llmgw runs large language models on fleets of NVIDIA GPU machines")
  .version(VERSION)
  .showHelpAfterError("(run with --help for usage)");

program
  .command("serve")
  .description("Run the control plane (API, agents' endpoints) on the embedded libSQL file or a libSQL server")
  .addOption(new Option("--host <host>", "address to listen on (env LLMGW_HOST, default 127.0.0.1)"))
  .addOption(new Option("--port <port>", "port to listen on, 0 for any free one (env LLMGW_PORT, default 8080)"))
  .addOption(new Option("--db <url-or-path>", "database: a file path, file: URL or libsql://… URL (env LLMGW_DB_URL, default file:./data/llmgw.db)"))
  .addHelpText(
    "after",
    `
Environment: LLMGW_DB_AUTH_TOKEN (remote database), LLMGW_ADMIN_TOKEN (use this admin token instead of
generating one), LLMGW_NODE_LOST_AFTER_S (180), LLMGW_HEARTBEAT_INTERVAL_S (60), LLMGW_POLL_WAIT_S (50),
LLMGW_SWEEP_INTERVAL_S (15), LLMGW_MAX_BODY_BYTES (2097152), LLMGW_REPAIR_GRACE_S (300),
LLMGW_REPAIR_MAX_FRACTION (0.2).

An embedded file database is migrated at start. A remote one is not: run \`llmgw migrate\` first.`,
  )
  .action(async (flags: { host?: string; port?: string; db?: string }) => {
    const { runServe } = await import("./serve.js");
    process.exitCode = await runServe(flags);
  });

program
  .command("migrate")
  .description("Apply pending database migrations (run once before rolling out instances on a libSQL server)")
  .addOption(new Option("--db <url-or-path>", "database (env LLMGW_DB_URL, default file:./data/llmgw.db)"))
  .action(async (flags: { db?: string }) => {
    const { runMigrate } = await import("./serve.js");
    process.exitCode = await runMigrate(flags);
  });

const agent = program.command("agent").description("The node agent (its run loop arrives with a later release) and its tools");
agent
  .command("inventory")
  .description("Show what the scheduler would see on this node: GPUs, MIG instances, NVLink fabric, IMEX, InfiniBand")
  .option("--json", "print the exact inventory the agent would register")
  .option("--nvidia-smi <path>", "nvidia-smi to run (default: nvidia-smi on PATH)")
  .option("--ib-root <dir>", "InfiniBand sysfs directory (default /sys/class/infiniband)")
  .option("--no-gpu", "skip GPU discovery")
  .option("--nvml", "read GPUs through NVML (libnvidia-ml.so.1) first, falling back to nvidia-smi")
  .option("--config <agent.yaml>", "agent configuration: fabrics, weights dirs, storage paths, engine probes, class overrides")
  .addHelpText(
    "after",
    `
Sources that cannot be read (a missing nvidia-smi, garbage output, a timeout, unreadable sysfs) are listed as
warnings and the rest is still shown; the exit status is 0 unless agent.yaml is invalid (2).`,
  )
  .action(async (flags: import("./agent.js").InventoryFlags) => {
    const { runInventory } = await import("./agent.js");
    process.exitCode = await runInventory(flags);
  });

await program.parseAsync(process.argv);
