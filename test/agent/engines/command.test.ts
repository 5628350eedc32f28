import { describe, expect, it } from "vitest";
import { command } from "../../../agent/engines/command.js";
import type { Readiness } from "../../../agent/engines/types.js";
import { HOST, makeShard, PROBE, twoNodeShard } from "./shard.js";

const template = (args: string[]) => ({ engine: "command", args }) as const;

describe("command.argv", () => {
  it("substitutes every placeholder", () => {
    const args = [
      "mock-engine",
      "--host={host}",
      "--port",
      "{port}",
      "--model",
      "{model}",
      "--weights",
      "{weights}",
      "--rank",
      "{rank}",
      "--nnodes",
      "{nnodes}",
      "--leader",
      "{leaderAddr}:{leaderPort}",
      "--tp",
      "{tp}",
      "--pp",
      "{pp}",
      "--devices",
      "{devices}",
    ];
    expect(command.argv(twoNodeShard(1, { httpPort: 20007, profile: template(args) }), HOST)).toEqual([
      "mock-engine",
      "--host=0.0.0.0",
      "--port",
      "20007",
      "--model",
      "meta-llama/Llama-3.1-70B-Instruct",
      "--weights",
      "/models/llama-3.1-70b",
      "--rank",
      "1",
      "--nnodes",
      "2",
      "--leader",
      "10.0.0.11:29500",
      "--tp",
      "4",
      "--pp",
      "2",
      "--devices",
      "0,1,2,3",
    ]);
  });

  it("passes a MIG device through {devices}", () => {
    const shard = makeShard({
      visibleDevices: "MIG-4f5e6d7c-0000-1111-2222-333344445555",
      deviceIds: [1001],
      profile: template(["srv", "{devices}"]),
    });
    expect(command.argv(shard, HOST)).toEqual(["srv", "MIG-4f5e6d7c-0000-1111-2222-333344445555"]);
  });

  it("leaves braces that are not placeholders alone", () => {
    const shard = makeShard({ profile: template(["srv", "--config", '{"port": 1}', "{}"]) });
    expect(command.argv(shard, HOST)).toEqual(["srv", "--config", '{"port": 1}', "{}"]);
  });

  it("puts agent.yaml's program before the template", () => {
    const shard = makeShard({ profile: template(["serve.py", "--port", "{port}"]) });
    expect(command.argv(shard, { ...HOST, command: ["/opt/venv/bin/python"] })).toEqual([
      "/opt/venv/bin/python",
      "serve.py",
      "--port",
      "20001",
    ]);
  });

  it("throws on an unknown placeholder, naming it and the known ones", () => {
    const shard = makeShard({ profile: template(["srv", "--gpu", "{gpu}"]) });
    expect(() => command.argv(shard, HOST)).toThrow(/unknown placeholder \{gpu\}.*known: \{port\} \{host\}/);
  });

  it("puts rank, nodes, leader, port and model in LLMGW_* variables for wrapper scripts", () => {
    const shard = twoNodeShard(1, { profile: template(["srv"]) });
    expect(command.env(shard)).toEqual({
      LLMGW_RANK: "1",
      LLMGW_NNODES: "2",
      LLMGW_LEADER_ADDR: shard.leaderAddr,
      LLMGW_LEADER_PORT: String(shard.leaderPort),
      LLMGW_PORT: String(shard.httpPort),
      LLMGW_MODEL: shard.model,
    });
  });

  it("throws on empty args", () => {
    expect(() => command.argv(makeShard({ profile: template([]) }), HOST)).toThrow(/engine "command" but has no args/);
  });
});

describe("command readiness", () => {
  it.each([
    makeShard({ profile: template(["srv"]) }),
    twoNodeShard(0, { profile: template(["srv"]) }),
    twoNodeShard(1, { profile: template(["srv"]) }),
  ])("probes /health on rank $rank", (shard) => expect(command.healthPath(shard)).toBe("/health"));

  it.each<[keyof typeof PROBE, Readiness]>([
    ["refused", "loading"],
    ["timeout", "loading"],
    ["ok", "ready"],
    ["unavailable", "loading"],
    ["internal", "dead"],
    ["notFound", "dead"],
  ])("%s → %s", (probe, want) => expect(command.readiness(PROBE[probe])).toBe(want));
});
