// Templated values in a profile's args and env: `{port}`, `{rank}`, `{leaderAddr}`, `{nodeAddr}` … — what differs from
// shard to shard, so that a profile can write a per-shard value (a second port, VLLM_HOST_IP) its engine needs.
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { EngineOptions } from "./types.js";

/** The value of every placeholder a template may use for `shard` on this node. */
export function placeholders(shard: StartShard, o: EngineOptions): Record<string, string> {
  return {
    port: String(shard.httpPort),
    host: o.host,
    model: shard.model,
    weights: shard.weightsPath,
    rank: String(shard.rank),
    nnodes: String(shard.nnodes),
    leaderAddr: shard.leaderAddr,
    leaderPort: String(shard.leaderPort),
    tp: String(shard.profile.tp),
    pp: String(shard.profile.pp),
    devices: shard.visibleDevices,
    ...(o.nodeAddr ? { nodeAddr: o.nodeAddr } : {}),
  };
}

/**
 * `text` with each `{name}` replaced. With `strict` (a `command` profile, whose args are all template) a name the
 * template language does not have throws, naming `strict`; otherwise it is left as written (a real engine's args may
 * hold JSON such as `{"temperature":0.6}`).
 */
export function substitute(text: string, values: Record<string, string>, strict?: string): string {
  return text.replace(/\{([A-Za-z]+)\}/g, (whole, name: string) => {
    const value = values[name];
    if (value !== undefined) return value;
    if (!strict) return whole;
    throw new Error(
      `unknown placeholder {${name}} in the ${strict}; known: ${Object.keys(values)
        .map((k) => `{${k}}`)
        .join(" ")}`,
    );
  });
}

/** The shard with its profile's args (not a `command` profile's: its adapter substitutes them) and env templated. */
export function withTemplates(shard: StartShard, o: EngineOptions): StartShard {
  const values = placeholders(shard, o);
  const p = shard.profile;
  return {
    ...shard,
    profile: {
      ...p,
      args: p.engine === "command" ? p.args : p.args.map((a) => substitute(a, values)),
      env: Object.fromEntries(Object.entries(p.env).map(([k, v]) => [k, substitute(v, values)])),
    },
  };
}
