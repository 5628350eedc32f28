import { describe, expect, it } from "vitest";
import { diffShards, type RunningRef } from "../../../agent/supervisor/diff.js";
import { makeShard } from "../engines/shard.js";

const want = (id: string, fingerprint = "fp-1") => makeShard({ shardId: id, fingerprint });
const have = (shardId: string, fingerprint = "fp-1"): RunningRef => ({ shardId, fingerprint });

describe("diffShards", () => {
  it.each([
    { name: "nothing at all", desired: [], running: [], start: [], stop: [], replace: [], keep: [] },
    {
      name: "a new shard is started",
      desired: [want("a")],
      running: [],
      start: ["a"],
      stop: [],
      replace: [],
      keep: [],
    },
    {
      name: "an unwanted shard is stopped",
      desired: [],
      running: [have("a")],
      start: [],
      stop: ["a"],
      replace: [],
      keep: [],
    },
    {
      name: "the same fingerprint is kept",
      desired: [want("a")],
      running: [have("a")],
      start: [],
      stop: [],
      replace: [],
      keep: ["a"],
    },
    {
      name: "another fingerprint is replaced",
      desired: [want("a", "fp-2")],
      running: [have("a", "fp-1")],
      start: [],
      stop: [],
      replace: ["a"],
      keep: [],
    },
    {
      name: "all four at once, each list in its input's order",
      desired: [want("d"), want("c", "fp-9"), want("b"), want("e")],
      running: [have("z"), have("c"), have("b"), have("y")],
      start: ["d", "e"],
      stop: ["z", "y"],
      replace: ["c"],
      keep: ["b"],
    },
  ])("$name", ({ desired, running, start, stop, replace, keep }) => {
    const d = diffShards(desired, running);
    expect({
      start: d.start.map((s) => s.shardId),
      stop: d.stop,
      replace: d.replace.map((s) => s.shardId),
      keep: d.keep,
    }).toEqual({ start, stop, replace, keep });
  });

  it("hands back the desired spec (not the running one) for starts and replacements", () => {
    const spec = want("a", "fp-2");
    const d = diffShards([spec, want("b")], [have("a", "fp-1")]);
    expect(d.replace[0]).toBe(spec);
    expect(d.start[0]).toEqual(want("b"));
  });
});
