import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawnEngine, stopEngine } from "../../../agent/supervisor/process.js";
import { loadRunAs, type RunAs, resolveRunAs, runAsNotice } from "../../../agent/supervisor/run-as.js";
import { tempDir } from "../../helpers/db.js";
import { until } from "../../helpers/process.js";

const PASSWD = [
  "root:x:0:0:root:/root:/bin/bash",
  "# a comment",
  "llm:x:1500:1500:LLM engines:/home/llm:/usr/sbin/nologin",
  "broken line",
  "",
].join("\n");
const GROUP = ["root:x:0:", "llm:x:1500:", "video:x:44:llm", ""].join("\n");

describe("resolveRunAs", () => {
  it.each([
    [
      "a user name: its uid, primary group and home",
      { user: "llm" },
      { uid: 1500, gid: 1500, user: "llm", home: "/home/llm" },
    ],
    [
      "a user and a group by name",
      { user: "llm", group: "video" },
      { uid: 1500, gid: 44, user: "llm", home: "/home/llm" },
    ],
    ["a numeric uid known to passwd", { user: "1500" }, { uid: 1500, gid: 1500, user: "llm", home: "/home/llm" }],
    [
      "numeric ids passwd does not know",
      { user: "2000", group: "2000" },
      { uid: 2000, gid: 2000, user: "2000", home: "/" },
    ],
  ])("%s", (_what, spec, want) => {
    expect(resolveRunAs(spec, PASSWD, GROUP)).toEqual(want);
  });

  it.each([
    [{ user: "nosuch" }, "agent.yaml run_as.user: no user nosuch in /etc/passwd"],
    [{ user: "llm", group: "nosuch" }, "agent.yaml run_as.group: no group nosuch in /etc/group"],
    [{ user: "2000" }, "agent.yaml run_as: uid 2000 has no /etc/passwd entry: give run_as.group as well"],
  ])("refuses %j, naming the key", (spec, message) => {
    expect(() => resolveRunAs(spec, PASSWD, GROUP)).toThrow(message);
  });
});

describe("runAsNotice", () => {
  const llm: RunAs = { uid: 1500, gid: 1500, user: "llm", home: "/home/llm" };
  it("says who engines run as", () => {
    expect(runAsNotice(llm, { uid: 0, gid: 0 })).toBe("run_as: engines run as llm (uid 1500, gid 1500)");
    expect(runAsNotice(llm, { uid: 1500, gid: 1500 })).toBe("run_as: engines run as llm (uid 1500, gid 1500)");
  });
  it("says plainly that a non-root agent cannot start engines as another user", () => {
    expect(runAsNotice(llm, { uid: 1000, gid: 1000 })).toMatch(
      /^run_as: engines run as llm \(uid 1500, gid 1500\), but the agent is not root \(uid 1000\): .* run the agent as root or remove run_as from agent\.yaml$/,
    );
  });
});

/** The real and effective uid and gid of a live process, from /proc/<pid>/status. */
function idsOf(pid: number): { uid: number[]; gid: number[]; groups: string } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (k: string) => status.match(new RegExp(`^${k}:[ \\t]*(.*)$`, "m"))![1]!.trim();
  return {
    uid: field("Uid").split(/\s+/).map(Number),
    gid: field("Gid").split(/\s+/).map(Number),
    groups: field("Groups"),
  };
}

describe("spawnEngine with run_as (a real process)", () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => {
    t = tempDir();
  });
  afterEach(() => t.cleanup());
  const isRoot = process.getuid?.() === 0;

  async function runAs(spec: { user: string; group?: string }) {
    const who = await loadRunAs(spec);
    const log = join(t.dir, "logs", "r1-s0.log");
    const script = "console.log(process.getuid(), process.env.HOME, process.env.USER); setInterval(() => {}, 1000)";
    const p = await spawnEngine([process.execPath, "-e", script], { X: "1" }, log, who);
    try {
      const ids = idsOf(p.pid);
      await until(async () => readFileSync(log, "utf8").includes("\n"));
      return { who, ids, log, output: readFileSync(log, "utf8"), logOwner: statSync(log).uid };
    } finally {
      await stopEngine(p.pid, p.startTime, 2000);
    }
  }

  it("runs the engine as the agent's own user (uid and gid in /proc/<pid>/status), with that user's HOME", async () => {
    const uid = process.getuid!();
    const user = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((l) => l.split(":")[2] === String(uid))!
      .split(":")[0]!;
    const r = await runAs({ user });
    expect(r.ids.uid).toEqual([uid, uid, uid, uid]);
    expect(r.ids.gid).toEqual(Array(4).fill(process.getgid!()));
    expect(r.output).toBe(`${uid} ${r.who.home} ${user}\n`);
  });

  // which of the two holds depends on who runs the tests: as root the drop is checked on a real process, otherwise
  // the refusal a non-root agent gives
  it(
    isRoot
      ? "as root, runs it as nobody: ids dropped, supplementary groups cleared, the log its own"
      : "as a non-root agent, says why an engine cannot start as another user",
    async () => {
      if (!isRoot) {
        const log = join(t.dir, "logs", "r1-s0.log");
        await expect(
          spawnEngine([process.execPath, "-e", "0"], {}, log, { uid: 0, gid: 0, user: "root", home: "/root" }),
        ).rejects.toThrow(/cannot start as root \(uid 0, gid 0\): .*agent\.yaml run_as needs the agent to run as root/);
        return;
      }
      const r = await runAs({ user: "nobody" });
      expect(r.who.uid).not.toBe(0);
      expect(r.ids.uid).toEqual(Array(4).fill(r.who.uid));
      expect(r.ids.gid).toEqual(Array(4).fill(r.who.gid));
      expect(r.ids.groups).toBe("");
      expect(r.output).toBe(`${r.who.uid} ${r.who.home} nobody\n`);
      expect(r.logOwner).toBe(r.who.uid);
      // the logs directory stays the agent's
      expect(statSync(join(t.dir, "logs")).uid).toBe(0);
    },
  );
});
