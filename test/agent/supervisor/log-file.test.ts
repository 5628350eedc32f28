import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { capLog, logPath } from "../../../agent/supervisor/log-file.js";
import { tempDir } from "../../helpers/db.js";

let t: ReturnType<typeof tempDir>;
let path: string;
beforeEach(() => {
  t = tempDir();
  path = logPath(t.dir, "r1-s0");
  mkdirSync(join(t.dir, "logs"));
});
afterEach(() => t.cleanup());

describe("capLog", () => {
  it("names the log after the shard under logs/", () => {
    expect(path).toBe(join(t.dir, "logs", "r1-s0.log"));
  });

  it("leaves a log at or below the limit alone", async () => {
    writeFileSync(path, "x".repeat(100));
    expect(await capLog(path, 100)).toBe(false);
    expect(readFileSync(path, "utf8")).toHaveLength(100);
    expect(existsSync(`${path}.1`)).toBe(false);
  });

  it("copies a log past the limit to .1 and truncates it in place", async () => {
    writeFileSync(path, "old line\n".repeat(20));
    expect(await capLog(path, 100)).toBe(true);
    expect(readFileSync(`${path}.1`, "utf8")).toBe("old line\n".repeat(20));
    expect(readFileSync(path, "utf8")).toBe("");
  });

  it("keeps one previous generation only", async () => {
    writeFileSync(path, "first generation, long enough\n");
    await capLog(path, 10);
    writeFileSync(path, "second generation, long enough\n", { flag: "a" });
    expect(await capLog(path, 10)).toBe(true);
    expect(readFileSync(`${path}.1`, "utf8")).toBe("second generation, long enough\n");
  });

  it("lets a writer holding the file open (O_APPEND) go on at the new end", async () => {
    const { openSync, writeSync, closeSync } = await import("node:fs");
    const fd = openSync(path, "a");
    try {
      writeSync(fd, "before the cap ".repeat(10));
      await capLog(path, 50);
      writeSync(fd, "after");
      expect(readFileSync(path, "utf8")).toBe("after");
    } finally {
      closeSync(fd);
    }
  });

  it("does nothing for a shard that has no log yet", async () => {
    expect(await capLog(join(t.dir, "logs", "none.log"), 0)).toBe(false);
  });
});
