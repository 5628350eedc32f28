// Placement runs one at a time per instance: a burst of callers shares the run going on and the one queued after it,
// and the queued run sees what changed meanwhile.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { placementAllowance } from "../../api/app.js";
import { bumpGeneration } from "../../api/db/cluster.js";
import { cluster } from "../../api/db/schema.js";
import { owedAfter, waitBefore } from "../../api/placement/pace.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { placeTimed, WRITE_ALLOWANCE_MS } from "../../api/placement/trigger.js";
import { createTestApp, defaultSettings, registerNodes, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await registerNodes(t, ["n1"]);
  await t.settle();
});
afterAll(() => t.close());

describe("placeTimed", () => {
  it("lets callers during a run share one run queued after it, which places what changed meanwhile", async () => {
    const runs: number[] = [];
    const deps = {
      store: t.store,
      settings: defaultSettings(),
      placementCache: newPlacementCache(),
      observePlacement: (s: number) => void runs.push(s),
    };
    await t.store.write((tx) => bumpGeneration(tx));
    const first = placeTimed(deps, t.clock.now());
    const during = Array.from({ length: 10 }, () => placeTimed(deps, t.clock.now()));
    for (const p of during) expect(p).toBe(during[0]);
    // a change while the first run goes on: the queued run places it
    await t.store.write((tx) => bumpGeneration(tx));
    await Promise.all([first, ...during]);
    expect(runs.length).toBeLessThanOrEqual(2);
    const [c] = await t.db.select().from(cluster).where(eq(cluster.id, 1));
    expect(c!.placedGeneration).toBe(c!.generation);
  });

  it("places an operator's writes in a row at once, and holds a run of runs to half of the time", () => {
    const allowance = WRITE_ALLOWANCE_MS;
    // one run of 100 ms: the next, asked for right after it, waits as long for an agent, not for a write
    let owed = owedAfter({ ms: 0, at: 0 }, 1_000, 1_100);
    expect(waitBefore(owed, 1_100)).toBe(100);
    expect(waitBefore(owed, 1_100, allowance)).toBe(0);
    // runs of 100 ms back to back: placement runs ahead by the allowance, then waits as long as each run took
    let at = 1_100;
    let waited = 0;
    for (let i = 0; i < 40; i++) {
      const wait = waitBefore(owed, at, allowance);
      waited += wait;
      owed = owedAfter(owed, at + wait, at + wait + 100);
      at += wait + 100;
    }
    // 41 runs of 100 ms: idle as long as they ran, but for the allowance and the last run (still owed)
    expect(waited).toBe(41 * 100 - allowance - 100);
    expect(waitBefore(owed, at, allowance)).toBe(100);
    // after a quiet spell as long as what is owed, nothing is owed any more
    expect(waitBefore(owed, at + 100, allowance)).toBe(0);
    expect(waitBefore(owed, at + 600)).toBe(0);
    expect(owedAfter(owed, at + 10_000, at + 10_050)).toEqual({ ms: 50, at: at + 10_050 });
  });

  it("gives the allowance to operators' writes, never to agents' calls (their storms must share runs)", () => {
    for (const path of ["/api/v1/deployments/chat", "/api/v1/nodes/n1/cordon", "/api/v1/models/m"])
      expect(placementAllowance(path)).toBe(WRITE_ALLOWANCE_MS);
    for (const path of ["/api/v1/agents/register", "/api/v1/agents/n1/status", "/api/v1/agents/n1/heartbeat"])
      expect(placementAllowance(path)).toBe(0);
  });
});
