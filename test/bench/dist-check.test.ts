// The benches' check that dist/ was built after the last change to the code it bundles.
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { changedSince, requireCurrentDist } from "../../bench/dist-check.js";
import { tempDir } from "../helpers/db.js";

const tmp = tempDir("llmgw-dist-check-");
afterAll(() => tmp.cleanup());

/** A file at `path` under the temp root, last modified at `s` seconds since the epoch. */
function file(path: string, s: number) {
  const full = join(tmp.dir, path);
  mkdirSync(join(full, ".."), { recursive: true });
  writeFileSync(full, "x");
  utimesSync(full, s, s);
}

describe("requireCurrentDist", () => {
  it("says to build when dist/llmgw.js is missing", () => {
    expect(() => requireCurrentDist(join(tmp.dir, "nowhere"))).toThrow(
      /dist\/llmgw\.js is missing: run `npm run build`/,
    );
  });

  it("passes a build newer than every bundled source, and names the source changed after it", () => {
    file("api/placement/plan.ts", 1_000);
    file("shared/schemas/model.ts", 1_100);
    file("dist/llmgw.js", 2_000);
    // a bench or a test changed after the build is not in the bundle
    file("bench/fleet.ts", 3_000);
    expect(() => requireCurrentDist(tmp.dir)).not.toThrow();
    // a source edited after the build (or an edit reverted after a test run rebuilt dist/)
    file("api/poll-hub.ts", 2_500);
    file("agent/sim/mock-engine.ts", 2_400);
    expect(changedSince(tmp.dir, 2_000_000)).toBe(join("api", "poll-hub.ts"));
    expect(() => requireCurrentDist(tmp.dir)).toThrow(
      "dist/ was built before api/poll-hub.ts last changed: run `npm run build` first",
    );
  });
});
