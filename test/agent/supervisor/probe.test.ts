import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { llamacpp } from "../../../agent/engines/llamacpp.js";
import { sglang } from "../../../agent/engines/sglang.js";
import { trtllm } from "../../../agent/engines/trtllm.js";
import { vllm } from "../../../agent/engines/vllm.js";
import { engineInflight, probeHost, probeHttp } from "../../../agent/supervisor/probe.js";
import { refusingPort } from "../../helpers/refusing-port.js";

const VLLM_METRICS = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2.0
# HELP vllm:num_requests_waiting_by_reason Number of requests waiting, by reason.
vllm:num_requests_waiting_by_reason{engine="0",reason="capacity"} 40.0
vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.25
`;

const inflight = (host: string, port: number) => engineInflight(host, port, vllm);

describe("vLLM's in-flight count", () => {
  it.each([
    {
      name: "vLLM's running + waiting, with labels (HELP/TYPE and look-alike metrics ignored)",
      text: VLLM_METRICS,
      want: 5,
    },
    {
      name: "two engines' lines add up",
      text: 'vllm:num_requests_running{engine="0"} 1\nvllm:num_requests_running{engine="1"} 4\n',
      want: 5,
    },
    {
      name: "an idle engine reports 0 (not undefined)",
      text: "vllm:num_requests_running 0.0\nvllm:num_requests_waiting 0.0\n",
      want: 0,
    },
    { name: "exponent notation", text: "vllm:num_requests_waiting 1e+01\n", want: 10 },
    { name: "no such metric", text: "# HELP x\nprocess_cpu_seconds_total 12.5\n", want: undefined },
    { name: "another engine's names", text: "sglang:num_running_reqs 3\n", want: undefined },
    { name: "empty text", text: "", want: undefined },
  ])("$name", ({ text, want }) => {
    expect(vllm.inflight.read(text)).toBe(want);
  });
});

describe("each engine's in-flight count, by its own names", () => {
  it("SGLang: sglang:num_running_reqs + sglang:num_queue_reqs", () => {
    const text =
      '# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name="m"} 2.0\nsglang:num_queue_reqs{model_name="m"} 3.0\nsglang:num_used_tokens{model_name="m"} 900\n';
    expect(sglang.inflight.read(text)).toBe(5);
    expect(sglang.inflight.read(VLLM_METRICS)).toBeUndefined();
  });

  it("llama.cpp: llamacpp:requests_processing + llamacpp:requests_deferred", () => {
    const text =
      "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\nllamacpp:requests_deferred 4\nllamacpp:kv_cache_tokens 12\n";
    expect(llamacpp.inflight.read(text)).toBe(5);
  });

  it("TensorRT-LLM: the latest iteration's active + queued requests; an empty list says nothing", () => {
    const stats = [
      { iter: 7, numActiveRequests: 9, numQueuedRequests: 9 },
      { iter: 8, numActiveRequests: 2, numQueuedRequests: 1, kvCacheStats: { usedNumBlocks: 3 } },
    ];
    expect(trtllm.inflight.read(JSON.stringify(stats))).toBe(3);
    expect(trtllm.inflight.read("[]")).toBeUndefined();
    expect(trtllm.inflight.read("vllm:num_requests_running 1")).toBeUndefined();
  });
});

describe("probeHttp and inflight against a real server", () => {
  let server: Server;
  let port: number;
  let closed: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/health") return void res.writeHead(200).end("ok");
      if (req.url === "/loading") return void res.writeHead(503).end("x".repeat(2000));
      if (req.url === "/metrics") return void res.writeHead(200).end(VLLM_METRICS);
      if (req.url === "/hang") return; // never answers
      res.writeHead(404).end("Not Found");
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    port = (server.address() as AddressInfo).port;
    closed = await refusingPort();
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  });

  it("gives the status and the start of the body of an answer", async () => {
    expect(await probeHttp("127.0.0.1", port, "/health")).toEqual({ kind: "status", status: 200, body: "ok" });
    expect(await probeHttp("127.0.0.1", port, "/missing")).toEqual({ kind: "status", status: 404, body: "Not Found" });
    const loading = await probeHttp("127.0.0.1", port, "/loading");
    expect(loading).toMatchObject({ kind: "status", status: 503 });
    expect(loading.kind === "status" && loading.body).toHaveLength(512);
  });

  it("tells a refused connection apart", async () => {
    expect(await probeHttp("127.0.0.1", closed, "/health")).toEqual({ kind: "refused" });
  });

  it("reports a server that does not answer in time as an error", async () => {
    const t0 = Date.now();
    const r = await probeHttp("127.0.0.1", port, "/hang", 100);
    expect(r.kind).toBe("error");
    expect(r.kind === "error" && r.message).toMatch(/timeout|aborted/i);
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it("probes an engine bound to an IPv6 address (in brackets) or to a host name", async () => {
    const v6 = createServer((_req, res) => res.writeHead(200).end(VLLM_METRICS));
    await new Promise<void>((ok) => v6.listen(0, "::1", ok));
    try {
      const p6 = (v6.address() as AddressInfo).port;
      expect(await probeHttp("::1", p6, "/health")).toMatchObject({ kind: "status", status: 200 });
      expect(await inflight("::1", p6)).toBe(5);
    } finally {
      await new Promise((ok) => v6.close(ok));
    }
    expect(await probeHttp("localhost", port, "/health")).toEqual({ kind: "status", status: 200, body: "ok" });
  });

  it("reads the in-flight count from /metrics, undefined when the engine cannot be asked", async () => {
    expect(await inflight("127.0.0.1", port)).toBe(5);
    expect(await inflight("127.0.0.1", closed)).toBeUndefined();
  });
});

describe("probeHost", () => {
  it.each([
    ["0.0.0.0", "127.0.0.1"],
    ["::", "127.0.0.1"],
    ["10.0.0.11", "10.0.0.11"],
    ["127.0.0.1", "127.0.0.1"],
  ])("probes an engine bound to %s on %s", (bind, host) => {
    expect(probeHost(bind)).toBe(host);
  });
});
