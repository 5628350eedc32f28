// The cluster gauges of one scrape as exposition text, on Node and on Workers alike. Rendered directly: at fleet size
// a scrape has a sample per GPU (80,000 at 10,000 nodes), which prom-client's gauges would hash and copy once more;
// and in parts, with a turn of the event loop between them, so that requests go on while a large fleet is rendered.
import { nextTurn } from "../../shared/next-turn.js";
import { CLUSTER_UP, type ClusterFigures, type ClusterScrape, DATABASE_UP, GAUGES } from "./cluster-figures.js";
import { renderFamily, renderSamples } from "./exposition.js";

/** Samples rendered between two turns of the event loop. */
const PART = 5000;

/** Every cluster gauge (without samples when the read failed), then whether it succeeded and whether the database answered. */
export async function clusterText(read: ClusterScrape): Promise<string> {
  const figures = read.figures;
  const parts: string[] = [];
  for (const [k, g] of Object.entries(GAUGES)) {
    const def = { ...g, type: "gauge" as const };
    const samples = figures ? figures[k as keyof ClusterFigures] : [];
    parts.push(renderFamily(def, samples.slice(0, PART)));
    for (let i = PART; i < samples.length; i += PART) {
      await nextTurn();
      parts.push(renderSamples(def, samples.slice(i, i + PART)));
    }
  }
  const one = (def: { name: string; help: string }, value: number) =>
    renderFamily({ ...def, type: "gauge", labelNames: [] }, [{ labels: {}, value }]);
  return [...parts, one(CLUSTER_UP, figures ? 1 : 0), one(DATABASE_UP, read.databaseUp ? 1 : 0)].join("");
}
