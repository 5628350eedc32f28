// A heartbeat's readings reach the database as a JSON merge patch that SQLite applies to the stored ones
// (`json_patch`), so that a heartbeat needs no read before its write. Whatever the heartbeats, the patches give what
// the merge written out below gives: a card's health readings replaced whole, anything left out kept (the inventory's
// own rule, applyReadings).
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type CardReadings, type Readings, readingsOf, readingsPatch } from "../../api/db/readings.js";
import type { Heartbeat } from "../../shared/schemas/agent.js";
import { migratedDb } from "../helpers/app.js";

let db: Awaited<ReturnType<typeof migratedDb>>;
beforeAll(async () => {
  db = await migratedDb();
});
afterAll(() => db.close());

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const card = fc.record(
  {
    uuid: fc.constantFrom("GPU-a", "GPU-b", "GPU-c"),
    memoryUsedMiB: opt(fc.nat(100_000)),
    utilizationPercent: opt(fc.integer({ min: 0, max: 100 })),
    migMemoryUsedMiB: opt(fc.dictionary(fc.constantFrom("0", "1", "2"), fc.nat(40_000))),
    health: opt(
      fc.record(
        {
          temperatureC: opt(fc.integer({ min: 20, max: 95 })),
          powerDrawW: opt(fc.double({ min: 0, max: 1000, noNaN: true })),
          processes: fc.array(fc.record({ pid: fc.nat(), name: fc.constantFrom("python", "vllm") }), { maxLength: 2 }),
          problems: fc.constant([] as string[]),
        },
        { requiredKeys: ["processes", "problems"] },
      ),
    ),
  },
  { requiredKeys: ["uuid"] },
);
const heartbeat = fc.record(
  { memoryAvailableMiB: opt(fc.nat(2_000_000)), gpus: opt(fc.uniqueArray(card, { selector: (c) => c.uuid })) },
  { requiredKeys: [] },
) as fc.Arbitrary<Heartbeat>;

/** `next` over `prev`, field by field: what the stored readings should be after each heartbeat. */
function mergeReadings(prev: Readings | undefined, next: Readings): Readings {
  if (!prev) return next;
  const gpus: Record<string, CardReadings> = { ...prev.gpus };
  for (const [uuid, r] of Object.entries(next.gpus ?? {})) {
    const had = gpus[uuid];
    const mig =
      had?.migMemoryUsedMiB && r.migMemoryUsedMiB ? { ...had.migMemoryUsedMiB, ...r.migMemoryUsedMiB } : undefined;
    gpus[uuid] = { ...had, ...r, ...(mig ? { migMemoryUsedMiB: mig } : {}) };
  }
  const memory = next.memoryAvailableMiB ?? prev.memoryAvailableMiB;
  return memory === undefined ? { gpus } : { memoryAvailableMiB: memory, gpus };
}

/** The stored readings after `patch`, as SQLite's json_patch leaves them. */
async function patched(stored: string | null, patch: string): Promise<string> {
  const [row] = await db.db.all<{ r: string }>(sql`select json_patch(coalesce(${stored}, '{}'), ${patch}) as r`);
  return row!.r;
}

it("give, heartbeat after heartbeat, what merging them field by field gives", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(heartbeat, { minLength: 1, maxLength: 4 }), async (beats) => {
      let merged: Readings | undefined;
      let stored: string | null = null;
      for (const hb of beats) {
        merged = mergeReadings(merged, readingsOf(hb));
        stored = await patched(stored, readingsPatch(hb));
      }
      expect(JSON.parse(stored!)).toEqual(JSON.parse(JSON.stringify(merged)));
    }),
    { numRuns: 300 },
  );
});
