// bench/fleet.ts's steady phase: nothing declared changes, the agents heartbeat and hold their long-polls, while this
// process asks GET /healthz one request at a time (the floor the agents' figures are read against) and the processes'
// CPU is taken from /proc before and after, the whole machine's too (a hypervisor's steal, other work beside the run).
import type { ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { procStat, type Servers } from "./fleet-servers.js";
import { machineLine, machineTicks } from "./machine.js";

/** Runs the steady phase for `seconds`: the floor's round trips (ms) and a line on each process's CPU. */
export async function steadyPhase(
  servers: Servers,
  urls: string[],
  agents: ChildProcess[],
  seconds: number,
  agentCount: number,
): Promise<{ floor: number[]; cpu: string[] }> {
  const floor: number[] = [];
  const cpu: string[] = [];
  const pids = [...servers.instances.map((i) => i.pid), ...(servers.sqld ? [servers.sqld.child.pid!] : [])];
  const agentPids = agents.map((c) => c.pid!);
  const before = [...pids, ...agentPids].map((p) => procStat(p).cpuMs);
  const machine0 = machineTicks();
  const own0 = process.cpuUsage();
  const s0 = performance.now();
  const end = s0 + seconds * 1000;
  for (let n = 0; performance.now() < end; n++) {
    const t = performance.now();
    const r = await fetch(`${urls[n % urls.length]}/healthz`).catch(() => undefined);
    await r?.arrayBuffer();
    if (r?.ok) floor.push(performance.now() - t);
    await sleep(Math.min(200, Math.max(0, end - performance.now())));
  }
  const wall = performance.now() - s0;
  const after = [...pids, ...agentPids].map((p) => procStat(p).cpuMs);
  const share = (i: number) => (after[i]! - before[i]!) / wall;
  for (let i = 0; i < servers.instances.length; i++)
    cpu.push(
      `serve[${i}] CPU ${(100 * share(i)).toFixed(1)}% of a core in the steady phase = ${((share(i) * 60_000) / agentCount).toFixed(2)} ms per agent per minute`,
    );
  if (servers.sqld) cpu.push(`sqld CPU ${(100 * share(pids.length - 1)).toFixed(1)}% of a core`);
  cpu.push(`agents CPU ${agentPids.map((_, i) => `${(100 * share(pids.length + i)).toFixed(1)}%`).join(" + ")}`);
  // serve, sqld, the agents and this process (the floor's requests, the probes), in ms
  const own = process.cpuUsage(own0);
  const oursMs = after.reduce((a, x, i) => a + x - before[i]!, 0) + (own.user + own.system) / 1000;
  cpu.push(`the machine's CPUs in the steady phase: ${machineLine(machine0, oursMs, wall)}`);
  return { floor, cpu };
}
