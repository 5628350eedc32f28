// agent.yaml's run policy keys: engines.allow, engines.command_programs, env_allow, run_as.
import { describe, expect, it } from "vitest";
import { parseAgentConfig } from "../../agent/config.js";
import { DEFAULT_PROBES } from "../../agent/discovery/engines.js";

function failure(text: string): string {
  try {
    parseAgentConfig(text);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected parseAgentConfig to throw");
}

describe("agent.yaml run policy", () => {
  it("allows the real engines and no command, denies loader variables, runs engines as the agent by default", () => {
    const c = parseAgentConfig("");
    expect(c.runPolicy).toEqual({ allow: ["vllm", "sglang", "llamacpp", "trtllm"], envAllow: [] });
    expect(c.runAs).toBeUndefined();
    expect(c.engineProbes).toEqual(DEFAULT_PROBES);
  });

  it("reads engines.allow, command_programs, env_allow and run_as", () => {
    const c = parseAgentConfig(
      [
        "engines:",
        "  allow: [vllm, command]",
        "  command_programs: [/opt/bin/my-server]",
        "  vllm: {command: [/opt/vllm/bin/vllm]}",
        "env_allow: [LD_LIBRARY_PATH]",
        "run_as: {user: llm, group: video}",
        "",
      ].join("\n"),
    );
    expect(c.runPolicy).toEqual({
      allow: ["vllm", "command"],
      commandPrograms: ["/opt/bin/my-server"],
      envAllow: ["LD_LIBRARY_PATH"],
    });
    expect(c.runAs).toEqual({ user: "llm", group: "video" });
    expect(c.engineOptions).toEqual({ vllm: { command: ["/opt/vllm/bin/vllm"] } });
    expect(c.engineProbes.map((p) => p.engine)).toEqual(["vllm", "vllm"]);
  });

  it("counts agent.yaml's own engines.command.command program as allowed", () => {
    const c = parseAgentConfig(
      "engines:\n  allow: [command]\n  command_programs: [/opt/bin/a]\n  command: {command: [/opt/bin/wrapper, --x]}\n",
    );
    expect(c.runPolicy.commandPrograms).toEqual(["/opt/bin/a", "/opt/bin/wrapper"]);
  });

  it("probes only the allowed engines, and none that is not (a node never offers an engine it refuses)", () => {
    expect(parseAgentConfig("engines: {allow: [sglang]}\n").engineProbes.map((p) => p.engine)).toEqual(["sglang"]);
    expect(parseAgentConfig("engines: {allow: [command]}\n").engineProbes).toEqual([]);
    expect(parseAgentConfig("engines: {allow: []}\n").runPolicy.allow).toEqual([]);
  });

  it.each([
    ["an engine allow does not know", "engines: {allow: [vllm, tgi]}\n", "engines.allow.1: Invalid option"],
    ["allow as a string", "engines: {allow: vllm}\n", "engines.allow: Invalid input: expected array"],
    [
      "settings for an engine allow leaves out",
      "engines: {command: {command: [/opt/x]}}\n",
      "engines.command: settings for command, which engines.allow does not list",
    ],
    [
      "command_programs without command allowed",
      "engines: {command_programs: [/opt/x]}\n",
      "engines.command_programs: set, but engines.allow does not list command",
    ],
    [
      "a relative command program",
      "engines: {allow: [command], command_programs: [bin/x]}\n",
      "engines.command_programs.0: must be an absolute path",
    ],
    [
      "an empty command_programs",
      "engines: {allow: [command], command_programs: []}\n",
      "engines.command_programs: Too small",
    ],
    ["a bad env_allow name", "env_allow: [LD-X]\n", "env_allow.0: must be an environment variable name"],
    ["env_allow as a string", "env_allow: PATH\n", "env_allow: Invalid input: expected array"],
    ["run_as without a user", "run_as: {group: video}\n", "run_as.user: Invalid input"],
    [
      "a run_as user that is no name",
      "run_as: {user: 'a b'}\n",
      "run_as.user: must be a user/group name or a numeric id",
    ],
    ["an unknown run_as key", "run_as: {user: llm, uid: 5}\n", "run_as.uid: unknown key"],
  ])("refuses %s, naming the key", (_what, text, message) => {
    expect(failure(text)).toContain(message);
  });
});
