// `llmgw mock-engine`: the OpenAI-compatible stand-in for vLLM, run as a process like any engine.

import { basename } from "node:path";
import { startMockEngine } from "../agent/sim/mock-engine.js";
import { METRICS_STYLES, type MetricsStyle } from "../agent/sim/mock-openai.js";
import { DEFAULT_CAPACITY_TOKENS } from "../agent/sim/prefix-cache.js";
import { createNodeLogger } from "../shared/log-node.js";

export type MockEngineFlags = {
  port: string;
  model: string;
  host: string;
  loadMs: string;
  tokensPerS: string;
  failAfter?: string;
  metrics?: string;
  abortOnStop?: boolean;
  prefixCache?: boolean;
  prefixCacheTokens?: string;
  blockTokens?: string;
  prefillTokensPerS?: string;
  ttftBaseMs?: string;
  /** False with --no-prefill-queue (LLMGW_MOCK_PREFILL_QUEUE=0). */
  prefillQueue?: boolean;
};

/** The engines whose command lines `llmgw mock-engine-cli` understands. */
export const MOCKED_CLIS = ["vllm", "sglang", "llamacpp", "trtllm"] as const;

/** Where each engine's command line names its weights, and the flag without which it serves no /metrics. */
const CLIS: Record<(typeof MOCKED_CLIS)[number], { weights: "positional" | string[]; metricsFlag?: string }> = {
  vllm: { weights: "positional" },
  sglang: { weights: ["--model-path", "--model"], metricsFlag: "--enable-metrics" },
  llamacpp: { weights: ["-m", "--model"], metricsFlag: "--metrics" },
  trtllm: { weights: "positional" },
};

/** The positional weights path: after `serve` for vLLM, the first non-flag argument for trtllm-serve. */
const positional = (engine: string, args: string[]) =>
  engine === "vllm" ? args[args.indexOf("serve") + 1] : args.find((a) => !a.startsWith("-"));

/**
 * The mock engine's flags from a real engine's command line, as llmgw's adapters write it: its --host and --port, the
 * served name (--served-model-name, --alias, --served_model_name; else the weights' base name, as trtllm-serve does),
 * and /metrics as that engine serves them — SGLang's only with --enable-metrics, llama.cpp's only with --metrics.
 */
export function cliFlags(engine: (typeof MOCKED_CLIS)[number], args: string[]): MockEngineFlags {
  const value = (...names: string[]) => {
    for (let i = args.length - 2; i >= 0; i--) if (names.includes(args[i]!)) return args[i + 1];
    return undefined;
  };
  const cli = CLIS[engine];
  const weights = cli.weights === "positional" ? positional(engine, args) : value(...cli.weights);
  const metrics: MetricsStyle = !cli.metricsFlag || args.includes(cli.metricsFlag) ? engine : "none";
  return {
    port: value("--port") ?? "8000",
    host: value("--host") ?? "127.0.0.1",
    model: value("--served-model-name", "--alias", "-a", "--served_model_name") ?? basename(weights ?? "model"),
    loadMs: process.env.LLMGW_MOCK_LOAD_MS ?? "0",
    tokensPerS: process.env.LLMGW_MOCK_TOKENS_PER_S ?? "200",
    abortOnStop: process.env.LLMGW_MOCK_ABORT_ON_STOP === "1",
    prefixCacheTokens: process.env.LLMGW_MOCK_PREFIX_CACHE_TOKENS,
    blockTokens: engine === "vllm" ? value("--block-size") : undefined,
    prefillTokensPerS: process.env.LLMGW_MOCK_PREFILL_TOKENS_PER_S,
    ttftBaseMs: process.env.LLMGW_MOCK_TTFT_BASE_MS,
    prefillQueue: process.env.LLMGW_MOCK_PREFILL_QUEUE !== "0",
    metrics,
  };
}

const num = (name: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER, integer = true) => {
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    throw new Error(
      `${name} must be ${integer ? "an integer" : "a number"} from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : " up"}, not ${JSON.stringify(v)}`,
    );
  }
  return n;
};

const opt = (name: string, v: string | undefined) =>
  v === undefined ? undefined : num(name, v, 0, Number.MAX_SAFE_INTEGER, false);

const metricsStyle = (v: string): MetricsStyle => {
  if (!(METRICS_STYLES as readonly string[]).includes(v))
    throw new Error(`--metrics must be one of ${METRICS_STYLES.join(", ")}, not ${JSON.stringify(v)}`);
  return v as MetricsStyle;
};

/** Serves until SIGTERM or SIGINT (then drains in-flight requests for at most ~2 s); returns the exit code. */
export async function runMockEngine(flags: MockEngineFlags): Promise<number> {
  let opts;
  try {
    opts = {
      model: flags.model,
      host: flags.host,
      port: num("--port", flags.port, 0, 65535),
      loadMs: num("--load-ms", flags.loadMs, 0),
      tokensPerS: num("--tokens-per-s", flags.tokensPerS, 0, Number.MAX_SAFE_INTEGER, false),
      failAfter: flags.failAfter === undefined ? undefined : num("--fail-after", flags.failAfter, 1),
      metrics: metricsStyle(flags.metrics ?? "vllm"),
      abortOnStop: flags.abortOnStop === true,
      prefixCacheTokens:
        flags.prefixCacheTokens !== undefined
          ? num("--prefix-cache-tokens", flags.prefixCacheTokens, 0)
          : flags.prefixCache
            ? DEFAULT_CAPACITY_TOKENS
            : 0,
      blockTokens: num("--block-tokens", flags.blockTokens ?? "16", 1),
      prefillTokensPerS: opt("--prefill-tokens-per-s", flags.prefillTokensPerS),
      ttftBaseMs: opt("--ttft-base-ms", flags.ttftBaseMs),
      prefillQueue: flags.prefillQueue !== false,
    };
  } catch (e) {
    process.stderr.write(`llmgw mock-engine: ${(e as Error).message}\n`);
    return 2;
  }
  const log = createNodeLogger("mock-engine");
  let engine;
  try {
    engine = await startMockEngine({ ...opts, env: process.env, crash: () => process.exit(1) });
  } catch (e) {
    log.error(`could not listen on ${opts.host}:${opts.port}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const cuda = process.env.CUDA_VISIBLE_DEVICES ?? "(unset)";
  process.stdout.write(
    `mock-engine: listening on http://${host}:${engine.port}, model ${opts.model}, loading for ${opts.loadMs} ms, CUDA_VISIBLE_DEVICES=${cuda}\n`,
  );
  await new Promise<void>((done) => {
    const stop = (sig: string) => {
      log.info(`${sig}: finishing in-flight requests`);
      engine.close().then(done, done);
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  return 0;
}
