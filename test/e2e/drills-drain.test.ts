// Drill: a replica scaled away mid-stream is drained before its engine stops, for every engine. Each engine's real
// adapter writes its real command line (`agent.yaml` points each engine's `command` at `llmgw mock-engine-cli`, which
// serves /metrics as that engine does: SGLang's only with --enable-metrics, llama.cpp's only with --metrics, TRT-LLM's
// as JSON iteration stats), and a `command` server without metrics is drained on the router's own count.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LLMGW } from "../../agent/sim/cluster.js";
import { tempDir } from "../helpers/db.js";
import { killAll, until } from "../helpers/process.js";
import { type SimCluster, startSimCluster } from "../helpers/sim.js";

const ENGINES = ["vllm", "sglang", "llamacpp", "trtllm"] as const;
// an engine stopped with requests in flight cuts them (a real one's process ends): only the agent's drain saves them
const ABORT = { LLMGW_MOCK_ABORT_ON_STOP: "1" };
const tmp = tempDir();
let c: SimCluster;
let key: string;

const asEngine = (e: string) => ({
  command: [process.execPath, LLMGW, "mock-engine-cli", e],
  probe: [process.execPath, "-e", "console.log('1.0.0')"],
});

beforeAll(async () => {
  c = await startSimCluster({
    dir: tmp.dir,
    scenario: "nodes:\n  - { id: hgx-a, kind: hgx-h100, uuid_prefix: d001 }\n",
    agentExtra: {
      drain_timeout_s: 60,
      // the `command` replica is the mock engine itself
      engines: { allow: [...ENGINES, "command"], ...Object.fromEntries(ENGINES.map((e) => [e, asEngine(e)])) },
    },
    serveEnv: {},
  });
  for (const e of ENGINES) {
    await c.api("PUT", `/api/v1/models/m-${e}`, {
      spec: {
        weightsPath: `/models/m-${e}`,
        profiles: [{ name: "one", engine: e, gpuClass: "h100-80g", tp: 1, gpusPerNode: 1, env: ABORT }],
      },
    });
  }
  await c.api("PUT", "/api/v1/models/m-command", {
    spec: {
      weightsPath: "/models/m-command",
      profiles: [
        {
          name: "one",
          engine: "command",
          gpuClass: "h100-80g",
          tp: 1,
          gpusPerNode: 1,
          args: [process.execPath, LLMGW, "mock-engine", "--port", "{port}", "--model", "{model}"].concat([
            "--host",
            "{host}",
            "--metrics",
            "none",
          ]),
        },
      ],
    },
  });
  for (const m of [...ENGINES, "command"])
    await c.api("PUT", `/api/v1/deployments/m-${m}`, { spec: { model: `m-${m}`, replicas: 1 } });
  key = await c.key();
}, 60_000);
afterAll(async () => {
  await c?.close();
  await killAll();
  tmp.cleanup();
});

/** A streamed chat of `tokens` tokens through the router; resolves with the text once the first chunk arrived. */
async function streaming(model: string, tokens: number) {
  const res = await c.chat(key, model, { stream: true, max_tokens: tokens });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  const rest = (async () => {
    let text = new TextDecoder().decode(first.value);
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return text;
      text += new TextDecoder().decode(value);
    }
  })();
  return { rest }; // not the promise itself: an async function would wait for it
}

describe("drill: a replica scaled away mid-stream is drained first", () => {
  it("every engine's stream finishes whole before its engine stops", async () => {
    const models = [...ENGINES, "command"].map((e) => `m-${e}`);
    for (const m of models) await c.ready(m, 1, 40_000);
    for (const m of models)
      await until(async () => (await c.chat(key, m, { max_tokens: 1 })).status === 200, 15_000, `${m} served`);
    // 1000 tokens at the mock's 200 per second: ~5 s, longer than the engine's own 2 s drain on SIGTERM
    const streams = await Promise.all(models.map((m) => streaming(m, 1000)));
    for (const m of models) await c.api("PUT", `/api/v1/deployments/${m}`, { spec: { model: m, replicas: 0 } });
    const agent = c.agents.get("hgx-a")!;
    await until(
      async () => (agent.output().match(/: draining \(no longer assigned/g) ?? []).length === models.length,
      20_000,
      "every shard draining",
    );
    const texts = await Promise.all(streams.map((s) => s.rest));
    for (const [i, text] of texts.entries()) {
      expect(text, models[i]).toContain("token999");
      expect(text.trimEnd().endsWith("data: [DONE]"), models[i]).toBe(true);
    }
    await until(
      async () => (agent.output().match(/: stopped \(no longer assigned/g) ?? []).length === models.length,
      30_000,
      "every shard stopped after its drain",
    );
  }, 120_000);
});
