import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { adoptFromStateDir, runningShard } from "../../../agent/supervisor/adopt.js";
import { procStat } from "../../../agent/supervisor/proc.js";
import { readRecords, writeRecord } from "../../../agent/supervisor/state-files.js";
import { tempDir } from "../../helpers/db.js";
import { makeRecord } from "./records.js";

const children: ChildProcess[] = [];
const kill = (c: ChildProcess) => {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  const gone = new Promise<void>((ok) => c.once("exit", () => ok()));
  try {
    process.kill(-c.pid!, "SIGKILL");
  } catch {
    c.kill("SIGKILL");
  }
  return gone;
};
afterAll(async () => {
  await Promise.all(children.splice(0).map(kill));
});

/** A detached `sleep 60` (an engine in its own session) and its start time. */
function engine() {
  const c = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
  children.push(c);
  const s = procStat(c.pid!);
  if (!s) throw new Error("the sleep did not start");
  return { child: c, pid: c.pid!, startTime: s.startTime };
}

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

const file = (id: string) => join(t.dir, "shards", `${id}.json`);

describe("adoptFromStateDir", () => {
  it("adopts a live engine whose start time matches, and keeps its record", async () => {
    const e = engine();
    const rec = makeRecord("live", { pid: e.pid, startTime: e.startTime });
    await writeRecord(t.dir, rec);
    const a = await adoptFromStateDir(t.dir);
    expect(a).toEqual({ alive: [rec], gone: [], problems: [] });
    expect(existsSync(file("live"))).toBe(true);
  });

  it("does not adopt a recycled pid (same pid, another start time) and removes its record", async () => {
    const e = engine();
    await writeRecord(t.dir, makeRecord("recycled", { pid: e.pid, startTime: e.startTime - 1 }));
    const a = await adoptFromStateDir(t.dir);
    expect(a.alive).toEqual([]);
    expect(a.gone.map((r) => r.shard.shardId)).toEqual(["recycled"]);
    expect(existsSync(file("recycled"))).toBe(false);
  });

  it("removes the record of an engine that exited", async () => {
    const e = engine();
    await kill(e.child);
    await writeRecord(t.dir, makeRecord("exited", { pid: e.pid, startTime: e.startTime }));
    const a = await adoptFromStateDir(t.dir);
    expect(a.gone.map((r) => r.shard.shardId)).toEqual(["exited"]);
    expect(existsSync(file("exited"))).toBe(false);
  });

  it("sorts a mixed state dir: live kept, gone removed, bad files reported and left alone", async () => {
    const live = engine();
    const dead = engine();
    await kill(dead.child);
    await writeRecord(t.dir, makeRecord("a-live", { pid: live.pid, startTime: live.startTime }));
    await writeRecord(t.dir, makeRecord("b-recycled", { pid: live.pid, startTime: live.startTime + 7 }));
    await writeRecord(t.dir, makeRecord("c-dead", { pid: dead.pid, startTime: dead.startTime }));
    writeFileSync(file("d-corrupt"), "][");
    const a = await adoptFromStateDir(t.dir);
    expect(a.alive.map((r) => r.shard.shardId)).toEqual(["a-live"]);
    expect(a.gone.map((r) => r.shard.shardId)).toEqual(["b-recycled", "c-dead"]);
    expect(a.problems).toHaveLength(1);
    expect(a.problems[0]).toContain("d-corrupt.json");
    expect((await readRecords(t.dir)).records.map((r) => r.shard.shardId)).toEqual(["a-live"]);
    expect(existsSync(file("d-corrupt"))).toBe(true);
  });

  it("asks the injected liveness check with each record's pid and start time", async () => {
    await writeRecord(t.dir, makeRecord("x", { pid: 11, startTime: 22 }));
    const asked: [number, number][] = [];
    const a = await adoptFromStateDir(t.dir, (pid, st) => {
      asked.push([pid, st]);
      return true;
    });
    expect(asked).toEqual([[11, 22]]);
    expect(a.alive).toHaveLength(1);
  });
});

describe("runningShard", () => {
  it("reports a record as the registration's running shard, with an optional state override", () => {
    const r = makeRecord(
      "r12-s1",
      { pid: 9, startedAt: 5, state: "loading" },
      { replicaId: "r12", rank: 1, httpPort: 20002, fingerprint: "fp-7" },
    );
    expect(runningShard(r)).toEqual({
      shardId: "r12-s1",
      replicaId: "r12",
      rank: 1,
      state: "loading",
      fingerprint: "fp-7",
      httpPort: 20002,
      pid: 9,
      startedAt: 5,
      spec: r.shard,
    });
    expect(runningShard(r, "ready").state).toBe("ready");
  });
});
