// Free TCP ports for a simulated node, a test server or the demo: bound, read, released.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** A TCP port that was free a moment ago (one the kernel picks: in its ephemeral range). */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
    s.on("error", fail);
  });
}

/** Whether `port` can be listened on, on every address (as an engine listening on 0.0.0.0 needs). */
function canListen(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const s = createServer();
    s.once("error", () => ok(false));
    s.listen(port, () => s.close(() => ok(true)));
  });
}

/** The first port of the kernel's ephemeral range (the local ports of outgoing connections and of port 0). */
export function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 1024 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

export type PortBlockOptions = { low?: number; high?: number; random?: () => number; tries?: number };

/**
 * The first of `count` consecutive ports all free a moment ago, below the kernel's ephemeral range (by default from
 * 20000): a simulated node's engine ports. Ports in that range would be taken at any moment by the local end of an
 * outgoing connection or by another process's port 0 — an engine placed on one then fails to listen, and its replica
 * fails past its restart limit for nothing the drill did.
 */
export async function freePortBlock(count: number, o: PortBlockOptions = {}): Promise<number> {
  const low = o.low ?? 20_000;
  const high = o.high ?? ephemeralLow();
  const blocks = Math.floor((high - low) / count);
  if (blocks < 1) throw new Error(`no room for ${count} ports between ${low} and ${high}`);
  const random = o.random ?? Math.random;
  for (let i = 0; i < (o.tries ?? 50); i++) {
    const first = low + Math.floor(random() * blocks) * count;
    let free = true;
    for (let p = first; p < first + count && free; p++) free = await canListen(p);
    if (free) return first;
  }
  throw new Error(`found no ${count} free ports in a row between ${low} and ${high}`);
}
