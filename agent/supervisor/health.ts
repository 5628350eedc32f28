// What one readiness probe means for a live engine, given what it did before: pure, so the rules read in one place.
import type { ProbeResult, Readiness } from "../engines/types.js";
import type { Slot } from "./types.js";

export type Verdict =
  | { kind: "ready" }
  /** Stop it and count a crash. */
  | { kind: "restart"; why: string }
  /** Out of routing (reported loading), with why when it says so. */
  | { kind: "not-ready"; message?: string }
  /** Nothing changes (a blip of a serving engine). */
  | { kind: "keep" };

const answered = (r: ProbeResult) =>
  r.kind === "status" ? `HTTP ${r.status}` : r.kind === "error" ? r.message : "refused";

/**
 * The adapter's reading of a probe (`readiness`) with the slot's history: before it ever served, "loading" is bounded
 * by the startup timeout; once it served, a refused or timed-out probe is a blip (a dying engine is caught by its
 * pid), while an answer that says it cannot serve (SGLang's failed health generation, llama.cpp, a command server)
 * takes it out of routing until it answers 2xx again — and past the startup timeout of that it is restarted.
 */
export function judgeProbe(s: Slot, readiness: Readiness, r: ProbeResult, path: string, now: number): Verdict {
  if (readiness === "ready") return { kind: "ready" };
  if (readiness === "dead") return { kind: "restart", why: `health check failed (${answered(r)})` };
  const limitMs = s.shard.profile.startupTimeoutS * 1000;
  if (s.served) {
    if (r.kind !== "status" && s.state === "ready") return { kind: "keep" };
    if (now - (s.unhealthySince ?? now) > limitMs)
      return { kind: "restart", why: `unhealthy for more than ${s.shard.profile.startupTimeoutS} s` };
    return r.kind === "status"
      ? {
          kind: "not-ready",
          message: `unhealthy: ${path} answered HTTP ${r.status} after ready; out of routing until it answers 2xx`,
        }
      : { kind: "keep" };
  }
  if (now - (s.startedAt ?? now) > limitMs)
    return { kind: "restart", why: `not ready within ${s.shard.profile.startupTimeoutS} s (startup timeout)` };
  return r.kind === "status" ? { kind: "not-ready" } : { kind: "keep" };
}
