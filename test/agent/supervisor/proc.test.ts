import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isSameProcess, parseProcStat, pidsInGroups, procStat } from "../../../agent/supervisor/proc.js";
import { tempDir } from "../../helpers/db.js";
import { until } from "../../helpers/process.js";

/** A /proc/<pid>/stat line: fields 3 (state), 5 (pgrp) and 22 (starttime) as given, the rest plausible. */
function statLine(o: {
  pid?: number;
  comm?: string;
  state?: string;
  pgrp?: number;
  startTime?: number | string;
}): string {
  const f = Array.from({ length: 50 }, (_, i) => String(i + 3)); // f[k] is field k + 3
  f[0] = o.state ?? "S";
  f[2] = String(o.pgrp ?? 4242);
  f[19] = String(o.startTime ?? 987654);
  return `${o.pid ?? 4242} (${o.comm ?? "vllm"}) ${f.join(" ")}\n`;
}

describe("parseProcStat", () => {
  it.each([
    {
      name: "a plain command",
      text: statLine({ comm: "sleep", state: "S", pgrp: 77, startTime: 123 }),
      want: { state: "S", pgid: 77, startTime: 123 },
    },
    {
      name: "a command name with spaces",
      text: statLine({ comm: "VLLM Engine Core", state: "R", pgrp: 5, startTime: 9 }),
      want: { state: "R", pgid: 5, startTime: 9 },
    },
    {
      name: "a command name with ') ' and '(' in it",
      text: statLine({ comm: "a) Z 1 2 (b", state: "S", pgrp: 6, startTime: 1234567 }),
      want: { state: "S", pgid: 6, startTime: 1234567 },
    },
    {
      name: "a zombie",
      text: statLine({ state: "Z", pgrp: 8, startTime: 10 }),
      want: { state: "Z", pgid: 8, startTime: 10 },
    },
    { name: "no closing parenthesis", text: "123 (sleep S 1 2 3", want: undefined },
    { name: "too few fields", text: "123 (sleep) S 1 2 3\n", want: undefined },
    { name: "a start time that is not a number", text: statLine({ startTime: "x" }), want: undefined },
    { name: "empty text", text: "", want: undefined },
  ])("$name", ({ text, want }) => {
    expect(parseProcStat(text)).toEqual(want);
  });

  it("reads this process's own stat", () => {
    const s = procStat(process.pid);
    expect(s).toBeDefined();
    expect(s!.startTime).toBeGreaterThan(0);
    expect(s!.state).toMatch(/^[RS]$/);
  });
});

describe("isSameProcess", () => {
  const me = procStat(process.pid)!;

  it("is true for the running process with its recorded start time", () => {
    expect(isSameProcess(process.pid, me.startTime)).toBe(true);
  });

  it("is false for the same pid with another start time (a recycled pid)", () => {
    expect(isSameProcess(process.pid, me.startTime + 1)).toBe(false);
    expect(isSameProcess(process.pid, 0)).toBe(false);
  });

  it("is false for a pid that does not exist", () => {
    expect(isSameProcess(2 ** 22 + 1, me.startTime)).toBe(false);
  });

  it("counts a zombie (or a dead task) as gone", () => {
    const t = tempDir();
    try {
      for (const [pid, state] of [
        [10, "Z"],
        [11, "X"],
        [12, "S"],
      ] as const) {
        mkdirSync(join(t.dir, String(pid)));
        writeFileSync(join(t.dir, String(pid), "stat"), statLine({ pid, state, startTime: 55 }));
      }
      expect([10, 11, 12].map((pid) => isSameProcess(pid, 55, t.dir))).toEqual([false, false, true]);
    } finally {
      t.cleanup();
    }
  });
});

describe("pidsInGroups", () => {
  it("finds every pid whose process group is listed, in a /proc-like tree", () => {
    const t = tempDir();
    try {
      const procs = [
        { pid: 100, pgrp: 100 },
        { pid: 101, pgrp: 100 },
        { pid: 102, pgrp: 100 },
        { pid: 200, pgrp: 200 },
        { pid: 300, pgrp: 1 },
      ];
      for (const p of procs) {
        mkdirSync(join(t.dir, String(p.pid)));
        writeFileSync(join(t.dir, String(p.pid), "stat"), statLine({ pid: p.pid, pgrp: p.pgrp }));
      }
      mkdirSync(join(t.dir, "self"));
      writeFileSync(join(t.dir, "self", "stat"), statLine({ pgrp: 100 }));
      mkdirSync(join(t.dir, "555")); // a process that exited while we read: no stat file
      expect([...pidsInGroups(new Set([100, 200]), t.dir)].sort()).toEqual([100, 101, 102, 200]);
      expect([...pidsInGroups(new Set([300]), t.dir)]).toEqual([300]); // the group itself, even when no member is found
      expect(pidsInGroups(new Set(), t.dir).size).toBe(0);
    } finally {
      t.cleanup();
    }
  });

  it("keeps the groups it was given when the root cannot be read", () => {
    expect([...pidsInGroups(new Set([7]), "/nonexistent-proc-root")]).toEqual([7]);
  });

  describe("on real processes", () => {
    const children: ChildProcess[] = [];
    afterEach(() => {
      for (const c of children.splice(0))
        if (c.pid)
          try {
            process.kill(-c.pid, "SIGKILL");
          } catch {
            /* gone */
          }
    });

    it("finds a detached group leader and the worker it forked", async () => {
      const c = spawn("sh", ["-c", "sleep 60 & wait"], { detached: true, stdio: "ignore" });
      children.push(c);
      const pid = c.pid!;
      let found = new Set<number>();
      await until(async () => (found = pidsInGroups(new Set([pid]))).size >= 2, 2000, "the forked sleep");
      expect(found.has(pid)).toBe(true);
      const worker = [...found].find((p) => p !== pid)!;
      expect(procStat(worker)!.pgid).toBe(pid);
      expect(pidsInGroups(new Set([pid])).has(process.pid)).toBe(false);
    });
  });
});
