// The one CLI entry: parses the subcommand and lazily imports the part it needs.
import { Command, Option } from "commander";
import { VERSION } from "../shared/version.js";

const program = new Command("llmgw")
  .description("llmgw runs large language models on fleets of NVIDIA GPU machines")
  .version(VERSION)
  .showHelpAfterError("(run with --help for usage)")
  .enablePositionalOptions();

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
LLMGW_REPAIR_MAX_FRACTION (0.2); the router's LLMGW_ROUTER_CONNECT_TIMEOUT_S (5), LLMGW_ROUTER_FIRST_BYTE_TIMEOUT_S
(600), LLMGW_ROUTER_IDLE_TIMEOUT_S (120), LLMGW_ROUTER_MAX_ATTEMPTS (3), LLMGW_ROUTER_MAX_REQUEST_BYTES (16777216).

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

program
  .command("mock-engine")
  .description("Run a small OpenAI-compatible engine that stands in for vLLM in tests, the demo and benchmarks")
  .requiredOption("--port <port>", "port to listen on, 0 for any free one (the chosen port is printed)")
  .requiredOption("--model <name>", "the one model it serves; requests naming another get 404")
  .option("--host <host>", "address to listen on", "0.0.0.0")
  .option("--load-ms <ms>", "GET /health answers 503 \"Loading model\" for this long after start", "0")
  .option("--tokens-per-s <n>", "pace of generated tokens, 0 for no pacing", "200")
  .option("--fail-after <n>", "exit with status 1 during the N-th completion request (after the first chunk when streaming)")
  .addHelpText(
    "after",
    `
Endpoints: GET /health, /v1/models, /metrics (vLLM names), /debug/env (the CUDA_*, NCCL_*, GLOO_*, GGML_*, LLMGW_* variables it
was given); POST /v1/chat/completions, /v1/completions (JSON or SSE with "stream": true), /v1/embeddings, /v1/responses.
Replies are deterministic: "token0 token1 …", 16 tokens unless max_tokens says otherwise. SIGTERM finishes in-flight
requests (for at most ~2 s) and exits 0.`,
  )
  .action(async (flags: import("./mock-engine.js").MockEngineFlags) => {
    const { runMockEngine } = await import("./mock-engine.js");
    process.exitCode = await runMockEngine(flags);
  });

const agent = program
  .command("agent")
  .enablePositionalOptions()
  .description("Run the node agent: register, long-poll for assignments, run and watch the engines, report")
  .option("--config <agent.yaml>", "agent configuration (default: every default; see docs/install.md)")
  .option("--server <url>", "control plane URL (overrides `server` in agent.yaml)")
  .option("--node-id <id>", "this node's id (default: agent.yaml `node_id`, else the host name)")
  .option("--mgmt-addr <addr>", "address the control plane and peers reach this node on (default: agent.yaml, else the first IPv4 address)")
  .option("--once", "one register/heartbeat, one poll without waiting, one reconcile, one status report, then exit (for a systemd timer)")
  .addHelpText(
    "after",
    `
Engines run detached in their own session and keep running when the agent stops (SIGTERM/SIGINT) or crashes; the
next agent adopts them from the state dir (pid and process start time). The node token received at registration is
saved in the state dir (mode 0600). Exit status: 0, 1 with a one-line reason (--once), 2 for a bad agent.yaml.`,
  )
  .action(async (flags: import("./agent.js").AgentFlags) => {
    const { runAgent } = await import("./agent.js");
    process.exitCode = await runAgent(flags);
  });
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
