// Discovery figures: parse time of the 8-GPU captures (median of many runs) and the agent's RSS after a whole
// discover() against the fake nvidia-smi replaying them. Run: npx tsx bench/discovery.ts
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "../agent/discovery/exec.js";
import { discover } from "../agent/discovery/index.js";
import { parseSmiXml } from "../agent/discovery/smi-xml.js";
import { parseTopo } from "../agent/discovery/topo.js";
import { machine, median } from "./machine.js";

const ROOT = join(import.meta.dirname, "..");
const fx = (p: string) => join(ROOT, "test", "fixtures", p);
const RUNS = 7;
const ITERATIONS = 200;

/** Median over RUNS of the mean time of one call, in ms. */
function time(fn: () => unknown): number {
  for (let i = 0; i < 20; i++) fn();
  const runs: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < ITERATIONS; i++) fn();
    runs.push((performance.now() - t0) / ITERATIONS);
  }
  return median(runs);
}

console.log(`machine: ${machine()}`);
const xmls = [
  "hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml",
  "hgx-8x-b200-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml",
];
for (const f of xmls) {
  const xml = readFileSync(fx(`smi-xml/${f}`), "utf8");
  console.log(
    `parseSmiXml ${f} (${Math.round(xml.length / 1024)} KiB, 8 GPUs): ${time(() => parseSmiXml(xml)).toFixed(2)} ms median`,
  );
}
const topo = readFileSync(fx("topo/hgx-h100-8x-nv18-8nic-legend-spaces-sglang30401.txt"), "utf8");
console.log(`parseTopo hgx-h100-8x-nv18-8nic (8 GPUs, 8 NICs): ${time(() => parseTopo(topo)).toFixed(3)} ms median`);

const env = {
  FAKE_SMI_XML: fx(`smi-xml/${xmls[0]}`),
  FAKE_SMI_L: fx("smi-L/CRAFTED-hgx-8x-h100-from-k8stestinfra-xml.txt"),
  FAKE_SMI_TOPO: fx("topo/hgx-h100-8x-nv18-8nic-legend-spaces-sglang30401.txt"),
};
Object.assign(process.env, env);
const walls: number[] = [];
for (let r = 0; r < RUNS; r++) {
  const t0 = performance.now();
  await discover({
    nvidiaSmi: join(ROOT, "agent", "sim", "fake-nvidia-smi"),
    ibRoot: fx("ib-sysfs/gpud-h100-sys-class-infiniband"),
    engineProbes: [],
    run,
  });
  walls.push(performance.now() - t0);
}
const rss = process.memoryUsage().rss / 2 ** 20;
console.log(
  `discover() whole node via the fake nvidia-smi (3 processes + sysfs): ${median(walls).toFixed(0)} ms median of ${RUNS}`,
);
console.log(`RSS after discovery: ${rss.toFixed(0)} MiB`);
