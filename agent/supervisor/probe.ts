// The HTTP side of watching an engine: one readiness probe, and the in-flight request count used while draining.
import type { ProbeResult } from "../engines/types.js";

/** The URL of a path on host:port; an IPv6 address goes in brackets. */
const urlOf = (host: string, port: number, path: string) =>
  `http://${host.includes(":") ? `[${host}]` : host}:${port}${path}`;

/** GETs http://host:port/path with a timeout and tells a refused connection apart from an answer or another error. */
export async function probeHttp(host: string, port: number, path: string, timeoutMs = 2000): Promise<ProbeResult> {
  try {
    const r = await fetch(urlOf(host, port, path), { signal: AbortSignal.timeout(timeoutMs) });
    return { kind: "status", status: r.status, body: (await r.text()).slice(0, 512) };
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause;
    if (cause?.code === "ECONNREFUSED") return { kind: "refused" };
    return { kind: "error", message: e instanceof Error ? e.message : String(e) };
  }
}

/** Requests the engine is still working on, from vLLM-style metrics (`…num_requests_running` + `…waiting`). */
export function inflightFromMetrics(text: string): number | undefined {
  let total: number | undefined;
  for (const line of text.split("\n")) {
    const m = /^[A-Za-z_:]*num_requests_(?:running|waiting)(?:\{[^}]*\})?\s+([0-9.eE+-]+)/.exec(line);
    if (m) total = (total ?? 0) + Number(m[1]);
  }
  return total;
}

/** The engine's in-flight request count, or undefined when it exposes no such metric (or cannot be asked). */
export async function inflight(host: string, port: number, timeoutMs = 2000): Promise<number | undefined> {
  try {
    const r = await fetch(urlOf(host, port, "/metrics"), { signal: AbortSignal.timeout(timeoutMs) });
    return r.ok ? inflightFromMetrics(await r.text()) : undefined;
  } catch {
    return undefined;
  }
}
