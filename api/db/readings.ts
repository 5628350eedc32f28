// A heartbeat's readings — what changes at every beat: memory in use and utilization of each card and MIG instance,
// each card's temperature, power draw and processes, the host's memory available — kept in the node row apart from
// its inventory (`nodes.readings`). A heartbeat that reports nothing else new writes only them: it neither parses nor
// rewrites the inventory, kilobytes of JSON. `readInventory` lays them over the inventory when a row is read.
import { heartbeatOf } from "../../shared/heartbeat-of.js";
import { Heartbeat } from "../../shared/schemas/agent.js";
import type { Gpu } from "../../shared/schemas/gpu.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { hashSecret } from "./secrets.js";

type GpuHealth = Gpu["health"];
/** The parts of a card's health that are readings; the rest (problems, ECC, pending retirements, limits) are facts. */
type HealthReadings = Pick<GpuHealth, "temperatureC" | "powerDrawW" | "processes">;
export type CardReadings = {
  memoryUsedMiB?: number;
  utilizationPercent?: number;
  migMemoryUsedMiB?: Record<string, number>;
  /** Present when the heartbeat sent the card's health: it replaces these three as it replaces the whole health. */
  health?: HealthReadings;
};

const healthReadings = ({ temperatureC, powerDrawW, processes }: GpuHealth): HealthReadings => ({
  ...(temperatureC === undefined ? {} : { temperatureC }),
  ...(powerDrawW === undefined ? {} : { powerDrawW }),
  processes,
});
const healthFacts = ({ temperatureC: _t, powerDrawW: _p, processes: _r, ...facts }: GpuHealth) => facts;
export type Readings = { memoryAvailableMiB?: number; gpus?: Record<string, CardReadings> };

/** The readings in a heartbeat, by card UUID. */
export function readingsOf(hb: Heartbeat): Readings {
  const gpus: Record<string, CardReadings> = {};
  for (const { uuid, memoryUsedMiB, utilizationPercent, migMemoryUsedMiB, health } of hb.gpus ?? []) {
    const r: CardReadings = {};
    if (health) r.health = healthReadings(health);
    if (memoryUsedMiB !== undefined) r.memoryUsedMiB = memoryUsedMiB;
    if (utilizationPercent !== undefined) r.utilizationPercent = utilizationPercent;
    if (migMemoryUsedMiB) r.migMemoryUsedMiB = migMemoryUsedMiB;
    gpus[uuid] = r;
  }
  return hb.memoryAvailableMiB === undefined ? { gpus } : { memoryAvailableMiB: hb.memoryAvailableMiB, gpus };
}

/**
 * The readings in a heartbeat as a JSON merge patch (RFC 7396, SQLite's `json_patch`) that, applied to the stored
 * readings, merges them: a card's health readings replace the last ones whole, so those it left out are deleted (null),
 * while what a card or the heartbeat leaves out keeps its last value, as it does in the inventory.
 */
export function readingsPatch(hb: Heartbeat): string {
  const r = readingsOf(hb);
  for (const card of Object.values(r.gpus ?? {})) {
    if (card.health) card.health = { temperatureC: null, powerDrawW: null, ...card.health } as HealthReadings;
  }
  return JSON.stringify(r);
}

/** The inventory with `r` applied; cards and MIG instances it does not name stay as they were. */
export function applyReadings(inv: Inventory, r: Readings): Inventory {
  const byUuid = r.gpus ?? {};
  const gpus = inv.gpus.map((gpu) => {
    const c = byUuid[gpu.uuid];
    if (!c) return gpu;
    const next = { ...gpu };
    if (c.memoryUsedMiB !== undefined) next.memoryUsedMiB = c.memoryUsedMiB;
    if (c.utilizationPercent !== undefined) next.utilizationPercent = c.utilizationPercent;
    if (c.health) next.health = { ...healthFacts(gpu.health), ...c.health };
    const used = c.migMemoryUsedMiB;
    if (used && next.mig) {
      next.mig = {
        ...next.mig,
        instances: next.mig.instances.map((m) => {
          const v = used[String(m.index)];
          return v === undefined ? m : { ...m, memoryUsedMiB: v };
        }),
      };
    }
    return next;
  });
  const memory =
    r.memoryAvailableMiB === undefined ? inv.memory : { ...inv.memory, availableMiB: r.memoryAvailableMiB };
  return { ...inv, gpus, memory };
}

/**
 * What a heartbeat says besides its readings, its shards and its IMEX peer list, as one string: the cards it names with
 * their fabric, MIG problems and the facts of their health, IMEX, the ports. Two heartbeats with the same facts change
 * the same inventory alike but for the readings.
 */
export function heartbeatFacts(hb: Heartbeat): string {
  const gpus = (hb.gpus ?? []).map(
    ({ memoryUsedMiB: _m, utilizationPercent: _u, migMemoryUsedMiB: _g, health, ...rest }) =>
      health ? { ...rest, health: healthFacts(health) } : rest,
  );
  return JSON.stringify([gpus, hb.imex ?? null, hb.ports ?? null]);
}

/** The digest of what a heartbeat says besides its readings (heartbeatFacts), as the heartbeat route takes it. */
export const factsDigest = (hb: Heartbeat): Promise<string> => hashSecret(heartbeatFacts(hb));

/**
 * The facts digest of the heartbeat an inventory implies (the one its agent sends while nothing changed): stored at a
 * registration, so that a first heartbeat saying what the registration said writes only its readings, as every later
 * one does, rather than a transaction per node. Null where the inventory makes no valid heartbeat (the full path then).
 */
export async function impliedDigest(inv: Inventory): Promise<string | null> {
  const hb = Heartbeat.safeParse(heartbeatOf(inv));
  return hb.success ? factsDigest(hb.data) : null;
}
