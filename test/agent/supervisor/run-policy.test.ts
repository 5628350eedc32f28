import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { launch } from "../../../agent/engines/index.js";
import {
  admit,
  DEFAULT_ALLOWED_ENGINES,
  envDenied,
  type RunPolicy,
  refusal,
  resolveProgram,
} from "../../../agent/supervisor/run-policy.js";
import { tempDir } from "../../helpers/db.js";
import { HOST, makeShard } from "../engines/shard.js";
import { fakeSupervisor, fakeWorld, type World } from "./fake-ops.js";

let t: ReturnType<typeof tempDir>;
let w: World;
beforeEach(() => {
  t = tempDir();
  w = fakeWorld();
});
afterEach(() => t.cleanup());

const DEFAULT: RunPolicy = { allow: DEFAULT_ALLOWED_ENGINES, envAllow: [] };
const cmdShard = (args: string[], env: Record<string, string> = {}) =>
  makeShard({ shardId: "r3-s0", httpPort: 20003, profile: { engine: "command", args, env } });

describe("envDenied", () => {
  it.each([
    ["LD_PRELOAD", true],
    ["LD_LIBRARY_PATH", true],
    ["LD_AUDIT", true],
    ["LD_ANYTHING_NEW", true],
    ["PATH", true],
    ["PYTHONPATH", true],
    ["PYTHONHOME", true],
    ["PYTHONSTARTUP", true],
    ["NODE_OPTIONS", true],
    ["BASH_ENV", true],
    ["ENV", true],
    ["PERL5LIB", true],
    ["RUBYOPT", true],
    ["BASH_FUNC_x%%", true],
    ["HOME", true],
    ["NCCL_DEBUG", false],
    ["CUDA_VISIBLE_DEVICES", false],
    ["VLLM_USE_V1", false],
    ["HF_HOME", false],
    ["PATHX", false],
    ["MY_PATH", false],
  ])("%s: %s", (name, denied) => {
    expect(envDenied(name, [])).toBe(denied);
  });

  it("lets agent.yaml env_allow name a denied variable, that one only", () => {
    expect(envDenied("LD_LIBRARY_PATH", ["LD_LIBRARY_PATH"])).toBe(false);
    expect(envDenied("LD_PRELOAD", ["LD_LIBRARY_PATH"])).toBe(true);
  });
});

describe("refusal", () => {
  it.each([
    ["vllm by default", makeShard(), DEFAULT, undefined],
    [
      "command by default",
      cmdShard(["x"]),
      DEFAULT,
      "engine command is not allowed on this node (agent.yaml engines.allow)",
    ],
    ["command when listed", cmdShard(["x"]), { ...DEFAULT, allow: ["command"] }, undefined],
    [
      "vllm when only sglang is allowed",
      makeShard(),
      { ...DEFAULT, allow: ["sglang"] },
      "engine vllm is not allowed on this node (agent.yaml engines.allow)",
    ],
    [
      "a profile's LD_PRELOAD",
      makeShard({ profile: { env: { VLLM_LOGGING_LEVEL: "DEBUG", LD_PRELOAD: "/tmp/x.so" } } }),
      DEFAULT,
      "profile env LD_PRELOAD is not allowed on this node (agent.yaml env_allow)",
    ],
    [
      "a profile's PATH",
      makeShard({ profile: { env: { PATH: "/tmp/evil:/usr/bin" } } }),
      DEFAULT,
      "profile env PATH is not allowed on this node (agent.yaml env_allow)",
    ],
    [
      "an env_allow'd LD_LIBRARY_PATH",
      makeShard({ profile: { env: { LD_LIBRARY_PATH: "/opt/cuda/lib64" } } }),
      { ...DEFAULT, envAllow: ["LD_LIBRARY_PATH"] },
      undefined,
    ],
    [
      "placement's NCCL and CUDA variables",
      makeShard({ env: { NCCL_IB_HCA: "=mlx5_0", NCCL_MNNVL_ENABLE: "1", CUDA_VISIBLE_DEVICES: "0" } }),
      DEFAULT,
      undefined,
    ],
    [
      "a control plane that puts LD_PRELOAD in placement's env",
      makeShard({ env: { LD_PRELOAD: "/tmp/x.so" } }),
      DEFAULT,
      "placement env LD_PRELOAD is not allowed on this node (agent.yaml env_allow)",
    ],
  ] as const)("%s", (_what, shard, policy, why) => {
    expect(refusal(shard, policy as RunPolicy)).toBe(why);
  });
});

describe("admit: command programs", () => {
  function bin(name: string) {
    const dir = join(t.dir, "bin");
    mkdirSync(dir, { recursive: true });
    const f = join(dir, name);
    writeFileSync(f, "#!/bin/sh\n");
    chmodSync(f, 0o755);
    return f;
  }
  const real = (s: ReturnType<typeof cmdShard>) => launch(s, HOST);

  it("runs an allowed program by its absolute path, also when the profile names it on PATH", () => {
    const server = bin("my-server");
    const p: RunPolicy = { allow: ["command"], commandPrograms: [server], envAllow: [] };
    expect(admit(cmdShard([server, "--port", "{port}"]), real, p).argv).toEqual([server, "--port", "20003"]);
    const onPath = (s: ReturnType<typeof cmdShard>) => {
      const c = real(s);
      return { ...c, env: { ...c.env, PATH: join(t.dir, "bin") } };
    };
    expect(admit(cmdShard(["my-server", "--port", "{port}"]), onPath, p).argv).toEqual([server, "--port", "20003"]);
  });

  it("accepts a program reached through a link to an allowed one", () => {
    const server = bin("my-server");
    const link = join(t.dir, "link");
    symlinkSync(server, link);
    const p: RunPolicy = { allow: ["command"], commandPrograms: [server], envAllow: [] };
    expect(admit(cmdShard([link]), real, p).argv).toEqual([link]);
  });

  it("refuses any other program, naming the key", () => {
    const p: RunPolicy = {
      allow: ["command"],
      commandPrograms: [bin("my-server")],
      envAllow: [],
      searchPath: process.env.PATH,
    };
    expect(() => admit(cmdShard(["sh", "-c", "id"]), real, p)).toThrow(
      /^program sh \(\/.*\/sh\) is not allowed on this node \(agent\.yaml engines\.command_programs\)$/,
    );
    expect(() => admit(cmdShard(["/nonexistent/x"]), real, p)).toThrow(
      "program /nonexistent/x is not allowed on this node (agent.yaml engines.command_programs)",
    );
  });

  it("leaves any program to a node that allows command without a list", () => {
    expect(admit(cmdShard(["sh", "-c", "id"]), real, { allow: ["command"], envAllow: [] }).argv[0]).toBe("sh");
  });

  it("resolves bare names on absolute PATH entries only", () => {
    const server = bin("my-server");
    expect(resolveProgram("my-server", `relative:${join(t.dir, "bin")}`)).toBe(server);
    expect(resolveProgram("my-server", "relative")).toBeUndefined();
  });
});

describe("supervisor: a shard the node's policy refuses", () => {
  it("is reported failed with the reason and never spawned; the others start", async () => {
    const sup = fakeSupervisor(t.dir, w, { policy: DEFAULT });
    const bad = makeShard({ shardId: "r1-s0", httpPort: 20001, profile: { env: { LD_PRELOAD: "/tmp/x.so" } } });
    const ok = makeShard({ shardId: "r2-s0", httpPort: 20002 });
    sup.setDesired([bad, ok, cmdShard(["/bin/sh", "-c", "id"])]);
    await sup.tick();
    expect(w.engines.map((e) => e.port)).toEqual([20002]);
    expect(sup.current()).toMatchObject([
      {
        shardId: "r1-s0",
        state: "failed",
        message: "profile env LD_PRELOAD is not allowed on this node (agent.yaml env_allow)",
      },
      { shardId: "r2-s0", state: "starting" },
      {
        shardId: "r3-s0",
        state: "failed",
        message: "engine command is not allowed on this node (agent.yaml engines.allow)",
      },
    ]);
    // the report the control plane gets carries it as the failure's reason
    expect(sup.takeReports().find((r) => r.shardId === "r1-s0")).toMatchObject({
      state: "failed",
      failure: { reason: "profile env LD_PRELOAD is not allowed on this node (agent.yaml env_allow)" },
    });
    // not retried: it stays failed, with nothing spawned, pass after pass
    w.advance(600_000);
    await sup.tick();
    expect(w.engines).toHaveLength(1);
    expect(sup.current()[0]).toMatchObject({ state: "failed" });
  });

  it("spawns the checked absolute path of an allowed command program", async () => {
    const sh = resolveProgram("sh", process.env.PATH)!;
    const policy = { allow: ["command"] as const, commandPrograms: [sh], envAllow: [], searchPath: process.env.PATH };
    const sup = fakeSupervisor(t.dir, w, { policy });
    w.ops.launch = (s) => launch(s, HOST);
    sup.setDesired([cmdShard(["sh", "-c", "exit 0", "--port", "{port}"])]);
    await sup.tick();
    expect(w.engines.map((e) => e.argv)).toEqual([[sh, "-c", "exit 0", "--port", "20003"]]);
  });
});
