import { describe, expect, it } from "vitest";
import { engines, launch } from "../../../agent/engines/index.js";
import { ENGINE_CAPABILITIES } from "../../../shared/engines.js";
import { Engine } from "../../../shared/schemas/model.js";
import { HOST, makeShard, twoNodeShard } from "./shard.js";

describe("engines", () => {
  it("has one adapter per engine, each registered under its own name", () => {
    expect(Object.keys(engines).sort()).toEqual([...Engine.options].sort());
    for (const [name, adapter] of Object.entries(engines)) expect(adapter.engine).toBe(name);
  });
});

describe("capabilities", () => {
  it("each adapter declares its row of shared/engines.ts, and refuses to span nodes exactly when the row says so", () => {
    for (const e of Engine.options) {
      const a = engines[e];
      expect(a.capabilities).toEqual(ENGINE_CAPABILITIES[e]);
      const across = () => a.argv(twoNodeShard(0, { profile: { engine: e, args: ["serve"] } }), HOST);
      if (a.capabilities.multiNode) expect(across, e).not.toThrow();
      else expect(across, e).toThrow(/node/);
    }
  });
});

describe("launch", () => {
  it("combines the adapter's argv with the shard's env", () => {
    const shard = twoNodeShard(1, {
      env: { NCCL_CUMEM_ENABLE: "1" },
      mgmtInterface: "eno1",
      profile: { env: { NCCL_DEBUG: "WARN" } },
    });
    expect(launch(shard, { ...HOST, command: ["/opt/venv/bin/vllm"] })).toEqual({
      argv: [
        "/opt/venv/bin/vllm",
        "serve",
        "/models/llama-3.1-70b",
        "--host",
        "0.0.0.0",
        "--port",
        "20001",
        "--served-model-name",
        "meta-llama/Llama-3.1-70B-Instruct",
        "--tensor-parallel-size",
        "4",
        "--pipeline-parallel-size",
        "2",
        "--distributed-executor-backend",
        "mp",
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--master-addr",
        "10.0.0.11",
        "--master-port",
        "29500",
        "--headless",
      ],
      env: {
        CUDA_DEVICE_ORDER: "PCI_BUS_ID",
        CUDA_VISIBLE_DEVICES: "0,1,2,3",
        NCCL_CUMEM_ENABLE: "1",
        NCCL_SOCKET_IFNAME: "=eno1",
        GLOO_SOCKET_IFNAME: "eno1",
        NCCL_DEBUG: "WARN",
      },
    });
  });

  it("picks the adapter by the profile's engine", () => {
    const shard = makeShard({
      weightsPath: "/models/q.gguf",
      model: "q",
      visibleDevices: "1",
      deviceIds: [1],
      profile: { engine: "llamacpp", tp: 1 },
    });
    expect(launch(shard, { ...HOST, backend: "vulkan" })).toEqual({
      argv: [
        "llama-server",
        "-m",
        "/models/q.gguf",
        "--host",
        "0.0.0.0",
        "--port",
        "20001",
        "-ngl",
        "999",
        "--alias",
        "q",
        "--metrics",
      ],
      env: { GGML_VK_VISIBLE_DEVICES: "1" },
    });
  });

  it.each([
    [
      "llama.cpp across nodes",
      twoNodeShard(0, { profile: { engine: "llamacpp" } }),
      HOST,
      /llama\.cpp runs on one node only/,
    ],
    ["TensorRT-LLM across nodes", twoNodeShard(1, { profile: { engine: "trtllm" } }), HOST, /needs mpirun or Slurm/],
    [
      "Vulkan on MIG",
      makeShard({ visibleDevices: "MIG-abc", deviceIds: [1000], profile: { engine: "llamacpp", tp: 1 } }),
      { ...HOST, backend: "vulkan" as const },
      /Vulkan cannot address MIG/,
    ],
    [
      "a bad template",
      makeShard({ profile: { engine: "command", args: ["srv", "{nope}"] } }),
      HOST,
      /unknown placeholder \{nope\}/,
    ],
  ])("throws the adapter's error for %s", (_, shard, o, want) => expect(() => launch(shard, o)).toThrow(want));
});

describe("templated values in a real engine's profile", () => {
  it("fills {leaderPort}, {rank}, {nodeAddr} … in args and env, and leaves other braces (JSON) as written", () => {
    const shard = twoNodeShard(1, {
      profile: {
        args: ["--data-parallel-rpc-port", "{leaderPort}", "--kv-transfer-config", '{"kv_role":"kv_both"}', "{nope}"],
        env: { VLLM_HOST_IP: "{nodeAddr}", RANK_NOTE: "rank {rank} of {nnodes}" },
      },
    });
    const { argv, env } = launch(shard, { ...HOST, nodeAddr: "10.0.0.12" });
    expect(argv.slice(-5)).toEqual([
      "--data-parallel-rpc-port",
      String(shard.leaderPort),
      "--kv-transfer-config",
      '{"kv_role":"kv_both"}',
      "{nope}",
    ]);
    expect(env).toMatchObject({ VLLM_HOST_IP: "10.0.0.12", RANK_NOTE: "rank 1 of 2" });
  });
});
