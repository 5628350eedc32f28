import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readRecords, recordPath, removeRecord, writeRecord } from "../../../agent/supervisor/state-files.js";
import { tempDir } from "../../helpers/db.js";
import { makeRecord } from "./records.js";

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

const shardsDir = () => join(t.dir, "shards");

describe("state files", () => {
  it("reads back what it wrote, every field, sorted by file name", async () => {
    const b = makeRecord("r2-s0", { pid: 77, startTime: 5, restarts: 2, state: "loading", unwantedSince: 123 });
    const a = makeRecord("r1-s0");
    await writeRecord(t.dir, b);
    await writeRecord(t.dir, a);
    expect(await readRecords(t.dir)).toEqual({ records: [a, b], problems: [] });
  });

  it("replaces a record atomically and leaves no temp file behind, readable by the agent only", async () => {
    await writeRecord(t.dir, makeRecord("r1-s0", { pid: 1 }));
    await writeRecord(t.dir, makeRecord("r1-s0", { pid: 2 }));
    expect(readdirSync(shardsDir())).toEqual(["r1-s0.json"]);
    expect(JSON.parse(readFileSync(join(shardsDir(), "r1-s0.json"), "utf8")).pid).toBe(2);
    expect(statSync(join(shardsDir(), "r1-s0.json")).mode & 0o777).toBe(0o600);
    expect(statSync(shardsDir()).mode & 0o777).toBe(0o700);
  });

  it("ignores a temp file left by a crash between write and rename", async () => {
    await writeRecord(t.dir, makeRecord("r1-s0"));
    writeFileSync(join(shardsDir(), "r2-s0.json.tmp"), "{ half a rec");
    const r = await readRecords(t.dir);
    expect(r.records.map((x) => x.shard.shardId)).toEqual(["r1-s0"]);
    expect(r.problems).toEqual([]);
  });

  it("reports a corrupt file and a file of the wrong shape in problems, and leaves both alone", async () => {
    await writeRecord(t.dir, makeRecord("good"));
    writeFileSync(join(shardsDir(), "corrupt.json"), "{not json");
    writeFileSync(join(shardsDir(), "shape.json"), JSON.stringify({ ...makeRecord("shape"), pid: -3 }));
    const r = await readRecords(t.dir);
    expect(r.records.map((x) => x.shard.shardId)).toEqual(["good"]);
    expect(r.problems).toHaveLength(2);
    expect(r.problems[0]).toContain(join(shardsDir(), "corrupt.json"));
    expect(r.problems[1]).toMatch(/shape\.json: not a shard record \(pid: /);
    expect(readdirSync(shardsDir()).sort()).toEqual(["corrupt.json", "good.json", "shape.json"]);
  });

  it("reads an absent state dir as empty", async () => {
    expect(await readRecords(join(t.dir, "nowhere"))).toEqual({ records: [], problems: [] });
  });

  it("removes a record, and an absent one is fine", async () => {
    await writeRecord(t.dir, makeRecord("r1-s0"));
    await removeRecord(t.dir, "r1-s0");
    await removeRecord(t.dir, "r1-s0");
    expect(readdirSync(shardsDir())).toEqual([]);
  });

  it.each(["../x", "a/b", "..", ".hidden", "", "x".repeat(65), "a b", "a\nb"])(
    "refuses the shard id %j as a file name",
    async (id) => {
      expect(() => recordPath(t.dir, id)).toThrow(/cannot name a file/);
      await expect(writeRecord(t.dir, makeRecord(id))).rejects.toThrow(/cannot name a file/);
      await expect(removeRecord(t.dir, id)).rejects.toThrow(/cannot name a file/);
      expect(existsSync(join(t.dir, "x.json"))).toBe(false);
    },
  );

  it("accepts the ids placement hands out", () => {
    expect(recordPath(t.dir, "r12-s0")).toBe(join(t.dir, "shards", "r12-s0.json"));
    expect(recordPath(t.dir, "Llama_3.1-x")).toBe(join(t.dir, "shards", "Llama_3.1-x.json"));
  });

  it("fails loudly when the shards path is not a directory", async () => {
    mkdirSync(t.dir, { recursive: true });
    writeFileSync(shardsDir(), "a file");
    await expect(readRecords(t.dir)).rejects.toThrow(/ENOTDIR/);
  });
});
