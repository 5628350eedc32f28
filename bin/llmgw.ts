// The one CLI entry: parses the subcommand and lazily imports the part it needs. `npm run build` bundles it into
// dist/llmgw.js (and `npm run build:binary` into one executable), defining the git commit it was built from.
import { Command, Option } from "commander";
import { VERSION } from "../shared/version.js";
import { addCtlCommands, PROCESS_EXIT } from "./ctl-cli.js";

declare const __LLMGW_COMMIT__: string | undefined;
declare const __LLMGW_BINARY__: boolean | undefined;
const COMMIT = typeof __LLMGW_COMMIT__ === "string" && __LLMGW_COMMIT__ ? __LLMGW_COMMIT__ : undefined;
const BINARY = typeof __LLMGW_BINARY__ === "boolean" && __LLMGW_BINARY__;

/** In the single binary, refuses a command that reads the npm package's files (exit 2); true when it did. */
function packageOnly(command: string, reads: string): boolean {
  if (!BINARY) return false;
  process.stderr.write(
    `llmgw ${command} needs the npm package install of llmgw (it reads ${reads}); the single binary runs agent, agent inventory, doctor, ctl, mock-engine, and serve against a libSQL server\n`,
  );
  process.exitCode = 2;
  return true;
}

// stack traces name the .ts lines of the build's source maps
process.setSourceMapsEnabled(true);

const program = new Command("llmgw")
  .description("llmgw runs large language models on fleets of NVIDIA GPU machines")
  .version(COMMIT ? `${VERSION} (commit ${COMMIT})` : VERSION)
  .showHelpAfterError("(run with --help for usage)")
  .enablePositionalOptions()
  // a usage error (unknown command or flag, missing argument or value) exits 2 for every command, which inherit this
  .exitOverride((e) => process.exit(e.exitCode === 0 ? 0 : 2))
  .addHelpText(
    "after",
    "\nEvery command exits 2 on a usage error (an unknown command or flag, a missing argument or value); its --help says the rest.",
  );

program
  .command("serve")
  .description("Run the control plane (API, agents' endpoints) on the embedded libSQL file or a libSQL server")
  .addOption(new Option("--host <host>", "address to listen on (env LLMGW_HOST, default 127.0.0.1)"))
  .addOption(new Option("--port <port>", "port to listen on, 0 for any free one (env LLMGW_PORT, default 8080)"))
  .addOption(
    new Option(
      "--db <url-or-path>",
      "database: a file path, file: URL or libsql://… URL (env LLMGW_DB_URL, default file:./data/llmgw.db)",
    ),
  )
  .addOption(new Option("--tls-cert <file>", "PEM certificate chain: serve HTTPS (env LLMGW_TLS_CERT; with --tls-key)"))
  .addOption(new Option("--tls-key <file>", "PEM private key of --tls-cert (env LLMGW_TLS_KEY); SIGHUP reloads both"))
  .addHelpText(
    "after",
    `
Environment: LLMGW_DB_AUTH_TOKEN (remote database), LLMGW_DB_SYNC (normal: the embedded file's log synced at
checkpoints; full: at every commit), LLMGW_HEAP_GROWTH_PERCENT (30: how far the heap grows past its live part before
a full collection; 0: V8's choice), LLMGW_ADMIN_TOKEN (use this admin token instead of generating one),
LLMGW_NODE_LOST_AFTER_S (180), LLMGW_HEARTBEAT_INTERVAL_S (60), LLMGW_POLL_WAIT_S (50),
LLMGW_SWEEP_INTERVAL_S (15), LLMGW_MAX_BODY_BYTES (2097152), LLMGW_REPAIR_GRACE_S (300),
LLMGW_REPAIR_MAX_FRACTION (0.2); the router's LLMGW_ROUTER_CONNECT_TIMEOUT_S (5), LLMGW_ROUTER_FIRST_BYTE_TIMEOUT_S
(600), LLMGW_ROUTER_IDLE_TIMEOUT_S (120), LLMGW_ROUTER_MAX_ATTEMPTS (3), LLMGW_ROUTER_MAX_REQUEST_BYTES (16777216),
LLMGW_ROUTER_MAX_INFLIGHT_PER_REPLICA (64), LLMGW_ROUTER_QUEUE_TIMEOUT_S (30);
LLMGW_METRICS_TOKEN (when set, GET /metrics needs \`Authorization: Bearer <it>\`; unset, /metrics is open).
With --tls-cert and --tls-key (LLMGW_TLS_CERT, LLMGW_TLS_KEY) it serves HTTPS; SIGHUP reloads the pair.

An embedded file database is migrated at start. A remote one is not: run \`llmgw migrate\` first.`,
  )
  .action(async (flags: import("../api/config.js").ServerFlags) => {
    const { runServe } = await import("./serve.js");
    process.exitCode = await runServe(flags);
  });

program
  .command("migrate")
  .description("Apply pending database migrations (run once before rolling out instances on a libSQL server)")
  .addOption(new Option("--db <url-or-path>", "database (env LLMGW_DB_URL, default file:./data/llmgw.db)"))
  .action(async (flags: { db?: string }) => {
    if (packageOnly("migrate", "the package's migrations/")) return;
    const { runMigrate } = await import("./serve.js");
    process.exitCode = await runMigrate(flags);
  });

program
  .command("mock-engine")
  .description(
    "Run a small OpenAI-compatible engine that stands in for vLLM in tests, the demo and benchmarks; with NCCL_DEBUG=INFO in its environment it prints, before it is ready, the NCCL init lines of the transport that environment implies (NCCL_MNNVL_ENABLE, NCCL_IB_HCA, LLMGW_SIM_NCCL_FALLBACK=socket)",
  )
  .requiredOption("--port <port>", "port to listen on, 0 for any free one (the chosen port is printed)")
  .requiredOption("--model <name>", "the one model it serves; requests naming another get 404")
  .option("--host <host>", "address to listen on", "0.0.0.0")
  .option("--load-ms <ms>", 'GET /health answers 503 "Loading model" for this long after start', "0")
  .option("--tokens-per-s <n>", "pace of generated tokens, 0 for no pacing", "200")
  .option(
    "--fail-after <n>",
    "exit with status 1 during the N-th completion request (after the first chunk when streaming)",
  )
  .option("--abort-on-stop", "on SIGTERM cut the requests in flight at once, as an engine whose process ends")
  .option(
    "--metrics <engine>",
    "whose metric names GET /metrics uses: vllm, sglang, llamacpp, trtllm (JSON iteration stats), or none (404)",
    "vllm",
  )
  .option(
    "--prefix-cache",
    "keep a prefix (KV) cache of 200000 tokens (a conservative figure for an H100-class replica)",
  )
  .option("--prefix-cache-tokens <n>", "keep a prefix (KV) cache of this many tokens (0: none, the default)")
  .option("--block-tokens <n>", "tokens a KV block of the prefix cache holds, as vLLM's --block-size", "16")
  .option(
    "--prefill-tokens-per-s <n>",
    "prefill pace: the first token waits for the uncached prompt tokens ÷ this (default 10000 with a prefix cache, else 0: no wait)",
  )
  .option("--ttft-base-ms <ms>", "fixed wait before prefill, added to every time to first token (default 0)")
  .option(
    "--no-prefill-queue",
    "prefill each request as if alone (by default one prefill at a time: a request waits for those before it)",
  )
  .addHelpText(
    "after",
    `
Endpoints: GET /health, /v1/models, /metrics (vLLM names unless --metrics says), /debug/env (the CUDA_*, NCCL_*, GLOO_*, GGML_*, LLMGW_* variables it
was given); POST /v1/chat/completions, /v1/completions (JSON or SSE with "stream": true), /v1/embeddings, /v1/responses.
Replies are deterministic: "token0 token1 …", 16 tokens unless max_tokens says otherwise. SIGTERM finishes in-flight
requests (for at most ~2 s; at once with --abort-on-stop) and exits 0.
Prompt tokens are whitespace-separated words. With a prefix cache, each prompt's full blocks are chain-hashed into an
LRU, as vLLM's automatic prefix caching does: usage.prompt_tokens_details.cached_tokens (when any hit) and /metrics'
vllm:prefix_cache_queries_total and vllm:prefix_cache_hits_total count the hits; the x-mock-prefill-ms header says how
long the first token waited (--ttft-base-ms, the prefills queued before it on this engine, and its own uncached prompt
tokens at --prefill-tokens-per-s).`,
  )
  .action(async (flags: import("./mock-engine.js").MockEngineFlags) => {
    const { runMockEngine } = await import("./mock-engine.js");
    process.exitCode = await runMockEngine(flags);
  });

program
  .command("mock-engine-cli")
  .description(
    "Run the mock engine from a real engine's command line (vllm, sglang, llamacpp, trtllm), as an agent.yaml `command` for that engine in tests",
  )
  .argument("<engine>", "whose command line follows: vllm, sglang, llamacpp or trtllm")
  .argument(
    "[args...]",
    "the engine's own arguments, as llmgw's adapter writes them (env LLMGW_MOCK_TOKENS_PER_S, LLMGW_MOCK_LOAD_MS, LLMGW_MOCK_ABORT_ON_STOP=1, LLMGW_MOCK_PREFIX_CACHE_TOKENS, LLMGW_MOCK_PREFILL_TOKENS_PER_S, LLMGW_MOCK_TTFT_BASE_MS; vLLM's --block-size)",
  )
  .allowUnknownOption()
  .helpOption(false)
  .action(async (engine: string, args: string[]) => {
    const { MOCKED_CLIS, cliFlags, runMockEngine } = await import("./mock-engine.js");
    if (!(MOCKED_CLIS as readonly string[]).includes(engine)) {
      process.stderr.write(`llmgw mock-engine-cli: <engine> must be one of ${MOCKED_CLIS.join(", ")}, not ${engine}\n`);
      process.exitCode = 2;
      return;
    }
    process.exitCode = await runMockEngine(cliFlags(engine as (typeof MOCKED_CLIS)[number], args));
  });

program
  .command("demo")
  .description(
    "Run a whole simulated cluster without GPUs: control plane, GB200 trays, H100, MIG and L40S nodes, mock engines, an API key",
  )
  .option("--port <port>", "control plane port, 0 for any free one", "8080")
  .option(
    "--scenario <file>",
    "the cluster to simulate and the models to run (default: the packaged agent/sim/scenarios/demo.yaml; see docs/demo.md)",
  )
  .option(
    "--data <dir>",
    "keep the database, agent state and logs in this directory (default: a temporary one, removed at exit)",
  )
  .option("--keep", "do not remove the temporary directory at exit")
  .option("--exit-when-ready", "print the lines below once every replica is ready, then stop everything and exit")
  .option("--timeout <s>", "give up (exit 1) when the replicas are not ready within this many seconds", "120")
  .addHelpText(
    "after",
    `
Starts, as child processes, \`llmgw serve\` on a fresh embedded database and one \`llmgw agent\` per node of the
scenario. The default one: six GB200 trays of one multi-node NVLink domain (tray 6's GPU 3 still joining), an 8× H100
HGX board, an A100 in MIG mode (2× 1g.20gb + 2× 2g.20gb) and two L40S nodes on the InfiniBand fabric ib-demo, each
seeing real nvidia-smi captures (shipped in the package) through a fake nvidia-smi (and nvidia-imex-ctl). It declares the
scenario's models on the mock engine (default: TP=8 on the H100 board, TP=8 over two GB200 trays, two MIG replicas,
TP=2 over the L40S pair), waits until they are ready, and prints the console URL, the admin token, an API key and a
curl line that streams a chat completion through the router.
Ctrl-C stops everything it started, engines included. Runs from the installed package or a checkout (npm run demo).
Exit status: 0, 1 with a reason when the cluster is not ready in time, 2 for a bad flag or scenario.`,
  )
  .action(async (flags: import("./demo.js").DemoFlags) => {
    if (packageOnly("demo", "the package's scenarios and captures")) return;
    const { runDemo } = await import("./demo.js");
    process.exitCode = await runDemo(flags);
  });

const agent = program
  .command("agent")
  .enablePositionalOptions()
  .description("Run the node agent: register, long-poll for assignments, run and watch the engines, report")
  .option("--config <agent.yaml>", "agent configuration (default: every default; see docs/install.md)")
  .option("--server <url>", "control plane URL (overrides `server` in agent.yaml)")
  .option("--node-id <id>", "this node's id (default: agent.yaml `node_id`, else the host name)")
  .option(
    "--mgmt-addr <addr>",
    "address the control plane and peers reach this node on (default: agent.yaml, else the first IPv4 address)",
  )
  .option(
    "--once",
    "one register/heartbeat, one poll without waiting, one reconcile, one status report, then exit (for a systemd timer)",
  )
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
  .option(
    "--config <agent.yaml>",
    "agent configuration: fabrics, weights dirs, storage paths, engine probes, class overrides",
  )
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

program
  .command("doctor")
  .description(
    "Check this node: driver and GPUs, MIG, NVLink fabric, IMEX, InfiniBand, engines, control plane, token and clock",
  )
  .option("--json", "print {checks: [{id, status, finding, fix}], summary} instead of the table")
  .option(
    "--config <agent.yaml>",
    "agent configuration (default: every default): server, state dir, fabrics, engines, TLS",
  )
  .option("--server <url>", "control plane URL (overrides `server` in agent.yaml); without one its checks are skipped")
  .option("--nvidia-smi <path>", "nvidia-smi to run (default: agent.yaml `nvidia_smi`, else nvidia-smi on PATH)")
  .option("--ib-root <dir>", "InfiniBand sysfs directory (default: agent.yaml `ib_root`, else /sys/class/infiniband)")
  .addHelpText(
    "after",
    `
Each check ends ok, warn, fail or skip (does not apply here, e.g. IMEX outside a multi-node NVLink domain, or the
control plane's checks without a server) with a one-line finding and a fix. Checks: driver, nvml, gpu-ecc,
gpu-memory-repair, gpu-temperature, gpu-processes, mig, nvlink-fabric, imex, imex-channel, imex-peers, ib-ports,
ib-fabrics, gpudirect-rdma, engines, discovery, control-plane, node-token, clock-skew (docs/operations.md explains
each). The path between nodes, ahead of time: ib-fabrics wants each HCA of agent.yaml's fabrics with an ACTIVE port
a subnet manager answered (sm_lid); gpudirect-rdma wants nvidia_peermem loaded, or the open kernel module on Linux
5.12+ (else NCCL goes through host memory); imex-peers compares agent.yaml imex_nodes_config (default
/etc/nvidia-imex/nodes_config.cfg) with the nodes the control plane sees in the NVLink domain. The token check polls
the node's assignments once with wait=0 (which also counts as the node being heard from), and once accepted the
node's NVLink peers are asked for; nothing else is changed.
Exit status: 0 when no check fails, 1 when one does, 2 for a bad agent.yaml or flag.`,
  )
  .action(async (flags: import("./doctor.js").DoctorFlags) => {
    const { runDoctor } = await import("./doctor.js");
    process.exitCode = await runDoctor(flags);
  });

addCtlCommands(program, (pick) => import("./ctl.js").then((m) => pick(m.ctlCommands())), PROCESS_EXIT);

// no top-level await: the single-executable build is CommonJS; a rejection still ends the process with its stack
void program.parseAsync(process.argv);
