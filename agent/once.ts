// `llmgw agent --once`: one register or heartbeat, one poll that does not wait, one reconcile, one status report.
// Engines it starts keep running after it exits; the next run adopts them (for a systemd timer).
import type { Inventory } from "../shared/schemas/inventory.js";
import type { Client } from "./client.js";
import { missingDevices } from "./heartbeat.js";
import type { Session } from "./session.js";
import type { Supervisor } from "./supervisor/reconcile.js";

export type OnceDeps = {
  nodeId: string;
  session: Session;
  client: Client;
  supervisor: Supervisor;
  discover: () => Promise<Inventory>;
  log: (line: string) => void;
};

/** Runs one sync; throws an Error with a one-line reason when a step fails. Returns a summary line. */
export async function runOnce(d: OnceDeps): Promise<string> {
  const inv = await d.discover();
  const how = await d.session.sync(inv, d.supervisor.current(), d.supervisor.running(), { due: true });
  const a = await d.client.poll(d.nodeId, 0, 0, d.session.token()!);
  d.supervisor.setDesired(a.shards, (s) => missingDevices(s, inv), a.refused);
  await d.supervisor.tick();
  await d.supervisor.settled();
  const states = d.supervisor.current();
  d.supervisor.takeReports();
  if (states.length) await d.client.status(d.nodeId, { shards: states.slice(0, 256) }, d.session.token()!);
  const counts = new Map<string, number>();
  for (const s of states) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
  const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(", ") || "no shards";
  return `${how === "registered" ? "registered" : "heartbeat sent"}; ${a.shards.length} shard${a.shards.length === 1 ? "" : "s"} assigned (index ${a.index}); ${summary}`;
}
