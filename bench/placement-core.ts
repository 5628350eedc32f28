// Placement core figures: plan() on a crafted fleet (NVL72-like racks, HGX nodes, A100 MIG nodes, L40S on IB),
// from empty and in steady state (every replica already placed). Run: npx tsx bench/placement-core.ts
import { plan } from "../api/placement/plan.js";
import type { PlaceNode, PlanInput } from "../api/placement/types.js";
import { a100Mig, deployment, hgx, input, l40s, MIG_CLASS, model, nvl72, profile } from "../test/placement/builders.js";
import { machine, median } from "./machine.js";

const RUNS = 5;

/** Median over RUNS of one call, in ms. */
function time(fn: () => unknown): number {
  fn();
  const runs: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    fn();
    runs.push(performance.now() - t0);
  }
  return median(runs);
}

/**
 * A fleet of `racks` 18-tray racks, `hgxCount` HGX nodes, a quarter as many MIG and L40S nodes, and deployments filling
 * most of it.
 */
function fleet(racks: number, hgxCount: number): PlanInput {
  const nodes: PlaceNode[] = [];
  for (let r = 0; r < racks; r++)
    nodes.push(
      ...nvl72(18, {
        prefix: `rack${r}`,
        domain: `${String(r).padStart(8, "0")}-0000-4000-8000-000000000000.1`,
        ib: true,
      }),
    );
  for (let i = 0; i < hgxCount; i++) nodes.push(hgx(`hgx-${i}`));
  for (let i = 0; i < hgxCount / 4; i++) nodes.push(a100Mig(`mig-${i}`), l40s(`l40s-${i}`));
  const models = [
    model("big", [profile("nvl", "gb200-185g", 4, 4)]),
    model("mid", [profile("tp8", "h100-80g", 8), profile("tp4", "h100-80g", 4)]),
    model("small", [profile("mig", MIG_CLASS)]),
    model("ib", [profile("ib", "l40s-48g", 4, 2), profile("one", "l40s-48g", 2)]),
  ];
  const deployments = [
    ...Array.from({ length: racks }, (_, i) => deployment(`big-${i}`, "big", 4)),
    ...Array.from({ length: hgxCount / 4 }, (_, i) => deployment(`mid-${i}`, "mid", 5)),
    ...Array.from({ length: hgxCount / 8 }, (_, i) => deployment(`small-${i}`, "small", 6)),
    ...Array.from({ length: hgxCount / 16 }, (_, i) => deployment(`ib-${i}`, "ib", 3)),
  ];
  return input({ nodes, models, deployments });
}

console.log(`machine: ${machine()}`);
for (const [racks, hgxCount] of [
  [2, 32],
  [8, 128],
  [16, 512],
] as const) {
  const x = fleet(racks, hgxCount);
  const first = plan(x);
  const steady = { ...x, replicas: first.assign, nextSeq: 1 + first.assign.length };
  const shards = first.assign.reduce((s, r) => s + r.shards.length, 0);
  const pending = first.pending.reduce((s, p) => s + p.count, 0);
  console.log(
    `${x.nodes.length} nodes, ${x.deployments.length} deployments: from empty ${time(() => plan(x)).toFixed(1)} ms ` +
      `(${first.assign.length} replicas, ${shards} shards, ${pending} pending); steady state ${time(() => plan(steady)).toFixed(1)} ms`,
  );
}
