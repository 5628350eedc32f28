// What this node agrees to run, whatever the control plane asks: the engines agent.yaml allows, the programs a
// `command` profile may start, and no loader or interpreter search-path variables from a profile's env. Without it an
// admin token would be a shell on every node (LD_PRELOAD, PATH, a `command` profile running anything). A shard refused
// here is reported failed with the reason; nothing is spawned.
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { Engine } from "../../shared/schemas/model.js";

export type RunPolicy = {
  /** The engines this node runs (agent.yaml engines.allow). */
  allow: readonly Engine[];
  /** When set, a `command` shard's program must be one of these (agent.yaml engines.command_programs). */
  commandPrograms?: readonly string[];
  /** Names of DENIED_ENV a profile may set anyway (agent.yaml env_allow). */
  envAllow: readonly string[];
  /** The PATH engines inherit from the agent, where a `command` program is looked up (the entry point gives it). */
  searchPath?: string;
};

export type Launched = { argv: string[]; env: Record<string, string> };

/** The engines allowed when agent.yaml does not say: the real ones, never `command` (it runs any program). */
export const DEFAULT_ALLOWED_ENGINES = ["vllm", "sglang", "llamacpp", "trtllm"] as const satisfies readonly Engine[];

/**
 * Variables that choose what code a process loads or runs before its own: the dynamic loader's, the program search
 * path, the interpreters' start-up hooks and module paths, and HOME (python's user site-packages). `*` ends a prefix.
 */
export const DENIED_ENV = [
  "LD_*",
  "DYLD_*",
  "GCONV_PATH",
  "GLIBC_TUNABLES",
  "LOCPATH",
  "NLSPATH",
  "HOSTALIASES",
  "PATH",
  "HOME",
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONSTARTUP",
  "PYTHONUSERBASE",
  "PYTHONEXECUTABLE",
  "PYTHONBREAKPOINT",
  "PYTHONWARNINGS",
  "PYTHONINSPECT",
  "NODE_OPTIONS",
  "NODE_PATH",
  "BASH_ENV",
  "ENV",
  "BASH_FUNC_*",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "PROMPT_COMMAND",
  "PERL5LIB",
  "PERL5OPT",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
] as const;

/** True when `name` is a denied variable that agent.yaml env_allow does not name. */
export function envDenied(name: string, envAllow: readonly string[]): boolean {
  if (envAllow.includes(name)) return false;
  return DENIED_ENV.some((d) => (d.endsWith("*") ? name.startsWith(d.slice(0, -1)) : name === d));
}

/**
 * Why `shard` may not run here, from what it asks for alone (its engine, its env names); undefined when it may. The
 * control plane's own env (placement's NCCL_*, CUDA_*) is held to the same rule: placement never sets these names.
 */
export function refusal(shard: StartShard, p: RunPolicy): string | undefined {
  const engine = shard.profile.engine;
  if (!p.allow.includes(engine)) return `engine ${engine} is not allowed on this node (agent.yaml engines.allow)`;
  for (const [where, env] of [
    ["profile", shard.profile.env],
    ["placement", shard.env],
  ] as const) {
    const bad = Object.keys(env).find((k) => envDenied(k, p.envAllow));
    if (bad) return `${where} env ${bad} is not allowed on this node (agent.yaml env_allow)`;
  }
  return undefined;
}

/** The absolute path `name` runs as (a bare name looked up on `path` as execvp does); undefined when none is found. */
export function resolveProgram(name: string, path: string | undefined): string | undefined {
  const runnable = (f: string) => {
    try {
      accessSync(f, constants.X_OK);
      return statSync(f).isFile();
    } catch {
      return false;
    }
  };
  if (name.includes("/")) return runnable(resolve(name)) ? resolve(name) : undefined;
  for (const dir of (path ?? "").split(delimiter)) {
    if (!isAbsolute(dir)) continue; // an empty or relative entry would depend on the agent's working directory
    const f = join(dir, name);
    if (runnable(f)) return f;
  }
  return undefined;
}

const real = (f: string) => {
  try {
    return realpathSync(f);
  } catch {
    return f;
  }
};

/**
 * The launch of `shard` when the policy admits it, its program given as the absolute path that was checked (so what
 * runs is what was allowed); throws an Error saying why not. Without a policy, `launch` as it is.
 */
export function admit(shard: StartShard, launch: (s: StartShard) => Launched, p?: RunPolicy): Launched {
  if (!p) return launch(shard);
  const why = refusal(shard, p);
  if (why) throw new Error(why);
  const cmd = launch(shard);
  if (shard.profile.engine !== "command" || !p.commandPrograms) return cmd;
  const path = cmd.env.PATH ?? p.searchPath;
  const program = cmd.argv[0] ?? "";
  const found = resolveProgram(program, path);
  const allowed = new Set(p.commandPrograms.flatMap((a) => [resolveProgram(a, path) ?? a].map(real)));
  if (!found || !allowed.has(real(found)))
    throw new Error(
      `program ${program}${found && found !== program ? ` (${found})` : ""} is not allowed on this node (agent.yaml engines.command_programs)`,
    );
  return { argv: [found, ...cmd.argv.slice(1)], env: cmd.env };
}

/** The line the agent logs at start: what it agrees to run. */
export function policyNotice(p: RunPolicy): string {
  const programs = p.allow.includes("command")
    ? `; command programs: ${p.commandPrograms?.join(", ") ?? "any (engines.command_programs is not set)"}`
    : "";
  const env = p.envAllow.length ? `; env allowed despite the deny list: ${p.envAllow.join(", ")}` : "";
  return `engines allowed: ${p.allow.join(", ") || "none"}${programs}${env}`;
}
