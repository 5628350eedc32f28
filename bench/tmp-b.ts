import { readFileSync } from "node:fs";
import { parseSmiXml } from "../agent/discovery/smi-xml.js";
const xml = readFileSync("/work/main/test/fixtures/smi-xml/hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml", "utf8");
const runs: number[] = [];
for (let r = 0; r < 15; r++) { const t0 = performance.now(); for (let i = 0; i < 50; i++) parseSmiXml(xml); runs.push((performance.now() - t0) / 50); }
console.log(runs.map((x) => x.toFixed(2)).join(" "));
