// What every adapter shares: the program part of its command line and how a /health answer reads.
import type { EngineOptions, ProbeResult, Readiness } from "./types.js";

/** The program that starts the engine: agent.yaml's `command` when set, else the adapter's default. */
export function program(o: EngineOptions, fallback: string[]): string[] {
  return o.command && o.command.length > 0 ? [...o.command] : [...fallback];
}

/**
 * Reads one /health probe. Refused or no answer (timeout, reset) is still loading: engines bind their port late, and
 * the startup deadline catches one that never comes up. 2xx is ready; 503 means what the engine says it means
 * (`on503`); any other status means something is wrong with what answers on that port, so it is dead.
 */
export function readHealth(r: ProbeResult, on503: Readiness): Readiness {
  if (r.kind !== "status") return "loading";
  if (r.status >= 200 && r.status < 300) return "ready";
  return r.status === 503 ? on503 : "dead";
}

/**
 * A version probe that reads an installed Python distribution's metadata: an interpreter start and a file read, not an
 * import of the engine (vLLM's own `--version` imports torch first: 5–19 s). Exits 1 when none of `names` is
 * installed for `python3`.
 */
export function pythonDistVersion(...names: string[]): string[] {
  const script = [
    "import importlib.metadata as m, sys",
    "for n in sys.argv[1:]:",
    "    try:",
    "        print(m.version(n)); break",
    "    except m.PackageNotFoundError:",
    "        pass",
    "else:",
    "    sys.exit(1)",
  ].join("\n");
  return ["python3", "-c", script, ...names];
}

/**
 * A reader of Prometheus text that sums the samples of `names` (every label set); undefined when none is there — an
 * engine started without its metrics, or a release that renamed them.
 */
export function prometheusSum(...names: string[]): (text: string) => number | undefined {
  return (text) => {
    let total: number | undefined;
    for (const line of text.split("\n")) {
      const m = /^([A-Za-z_:][\w:]*)(?:\{[^}]*\})?\s+([0-9.eE+-]+|NaN)\s*$/.exec(line);
      if (m && names.includes(m[1]!) && Number.isFinite(Number(m[2]))) total = (total ?? 0) + Number(m[2]);
    }
    return total;
  };
}

/** Adds `flag` unless the profile's args already have it. */
export const withFlag = (args: readonly string[], flag: string) => (args.includes(flag) ? [] : [flag]);
