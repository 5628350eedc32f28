// `llmgw mock-engine`: the OpenAI-compatible stand-in for vLLM, run as a process like any engine.
import { startMockEngine } from "../agent/sim/mock-engine.js";

export type MockEngineFlags = {
  port: string;
  model: string;
  host: string;
  loadMs: string;
  tokensPerS: string;
  failAfter?: string;
};

const num = (name: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER, integer = true) => {
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    throw new Error(
      `${name} must be ${integer ? "an integer" : "a number"} from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : " up"}, not ${JSON.stringify(v)}`,
    );
  }
  return n;
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
    };
  } catch (e) {
    process.stderr.write(`llmgw mock-engine: ${(e as Error).message}\n`);
    return 2;
  }
  let engine;
  try {
    engine = await startMockEngine({ ...opts, env: process.env, crash: () => process.exit(1) });
  } catch (e) {
    process.stderr.write(
      `llmgw mock-engine: could not listen on ${opts.host}:${opts.port}: ${e instanceof Error ? e.message : String(e)}\n`,
    );
    return 1;
  }
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const cuda = process.env.CUDA_VISIBLE_DEVICES ?? "(unset)";
  process.stdout.write(
    `mock-engine: listening on http://${host}:${engine.port}, model ${opts.model}, loading for ${opts.loadMs} ms, CUDA_VISIBLE_DEVICES=${cuda}\n`,
  );
  await new Promise<void>((done) => {
    const stop = (sig: string) => {
      process.stderr.write(`mock-engine: ${sig}, finishing in-flight requests\n`);
      engine.close().then(done, done);
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  return 0;
}
