// The HTTP side of watching an engine: one readiness probe, and the in-flight request count used while draining.
import type { EngineAdapter, ProbeResult } from "../engines/types.js";

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

/**
 * The requests an engine still works on, read as its adapter says (`inflight`); undefined when the adapter has no
 * way, the engine does not answer, or its answer does not say.
 */
export async function engineInflight(
  host: string,
  port: number,
  adapter: Pick<EngineAdapter, "inflight">,
  timeoutMs = 2000,
): Promise<number | undefined> {
  if (!adapter.inflight) return undefined;
  try {
    const r = await fetch(urlOf(host, port, adapter.inflight.path), { signal: AbortSignal.timeout(timeoutMs) });
    return r.ok ? adapter.inflight.read(await r.text()) : undefined;
  } catch {
    return undefined;
  }
}

/** The probe host for engines bound to `bindHost` (a wildcard bind is probed on loopback). */
export const probeHost = (bindHost: string) => (bindHost === "0.0.0.0" || bindHost === "::" ? "127.0.0.1" : bindHost);
