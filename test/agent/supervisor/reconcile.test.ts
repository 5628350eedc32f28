import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readRecords } from "../../../agent/supervisor/state-files.js";
import { tempDir } from "../../helpers/db.js";
import { until } from "../../helpers/process.js";
import { makeShard } from "../engines/shard.js";
import { fakeSupervisor, fakeWorld, PROBE, type World } from "./fake-ops.js";
import { makeRecord } from "./records.js";

let t: ReturnType<typeof tempDir>;
let w: World;
beforeEach(() => {
  t = tempDir();
  w = fakeWorld();
});
afterEach(() => t.cleanup());

const A = makeShard({ shardId: "r1-s0", replicaId: "r1", httpPort: 20001, profile: { startupTimeoutS: 600 } });
const B = makeShard({ shardId: "r2-s0", replicaId: "r2", httpPort: 20002, model: "other" });
const recordFile = (id: string) => join(t.dir, "shards", `${id}.json`);
const readRecord = (id: string) => JSON.parse(readFileSync(recordFile(id), "utf8"));
const states = (sup: ReturnType<typeof fakeSupervisor>) =>
  Object.fromEntries(sup.current().map((r) => [r.shardId, r.state]));

/** A supervisor whose shard A is up and ready (its reports taken). */
async function readyA(over: Parameters<typeof fakeSupervisor>[2] = {}) {
  const sup = fakeSupervisor(t.dir, w, over);
  sup.setDesired([A]);
  await sup.tick();
  w.probes.set(A.httpPort, PROBE.ok);
  await sup.tick();
  expect(states(sup)).toEqual({ "r1-s0": "ready" });
  sup.takeReports();
  return sup;
}

describe("supervisor: starting", () => {
  it("takes a desired shard through starting, loading and ready as the probe changes, one latest report per shard", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([A]);
    await sup.tick();
    expect(w.engines).toHaveLength(1);
    const e = w.engines[0]!;
    expect(e.argv).toEqual(["vllm", "serve", A.model, "--port", "20001"]);
    expect(e.log).toBe(join(t.dir, "logs", "r1-s0.log"));
    const first = sup.takeReports();
    expect(first).toEqual([
      {
        shardId: "r1-s0",
        replicaId: "r1",
        state: "starting",
        at: w.clock,
        message: `pid ${e.pid}: vllm serve ${A.model} --port 20001`,
      },
    ]);
    expect(readRecord("r1-s0")).toMatchObject({
      pid: e.pid,
      startTime: e.startTime,
      state: "starting",
      restarts: 0,
      startedAt: w.clock,
    });

    await sup.tick(); // still refused: nothing changes
    expect(sup.takeReports()).toEqual([]);

    w.probes.set(A.httpPort, PROBE.loading);
    w.advance(1000);
    await sup.tick();
    expect(sup.takeReports()).toEqual([{ shardId: "r1-s0", replicaId: "r1", state: "loading", at: w.clock }]);

    w.probes.set(A.httpPort, PROBE.ok);
    await sup.tick();
    await sup.tick();
    expect(sup.takeReports()).toEqual([{ shardId: "r1-s0", replicaId: "r1", state: "ready", at: w.clock }]);
    expect(readRecord("r1-s0").state).toBe("ready");
    expect(w.engines).toHaveLength(1);
    expect(w.lines).toContain("shard r1-s0: ready");
  });

  it("keeps only the latest transition of each shard between two takes", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([A, B]);
    w.probes.set(B.httpPort, PROBE.ok);
    await sup.tick();
    const r = sup.takeReports();
    expect(r.map((x) => [x.shardId, x.state])).toEqual([
      ["r1-s0", "starting"],
      ["r2-s0", "ready"],
    ]);
  });

  it("calls a shard that serves no HTTP (a rank > 0) ready once it runs", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([makeShard({ shardId: "r1-s1", rank: 1, nnodes: 2 })]);
    await sup.tick();
    expect(states(sup)).toEqual({ "r1-s1": "ready" });
  });

  it("fails a shard at once, without spawning, when its command cannot be built", async () => {
    w.launchError = "vllm: tp 4 needs 4 GPUs, the shard has 2";
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([A]);
    await sup.tick();
    expect(sup.takeReports()).toEqual([
      {
        shardId: "r1-s0",
        replicaId: "r1",
        state: "failed",
        at: w.clock,
        message: "vllm: tp 4 needs 4 GPUs, the shard has 2",
        failure: {
          reason: "vllm: tp 4 needs 4 GPUs, the shard has 2",
          restart: 0,
          restartLimit: 2,
          gaveUp: true,
          logTail: [],
          at: w.clock,
        },
      },
    ]);
    w.advance(3_600_000);
    await sup.tick();
    expect(w.engines).toHaveLength(0);
    expect(sup.takeReports()).toEqual([]);
    expect(existsSync(recordFile("r1-s0"))).toBe(false);
  });

  it("fails a shard whose port another program holds", async () => {
    w.busyPorts.add(A.httpPort);
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([A]);
    await sup.tick();
    expect(w.engines).toHaveLength(0);
    expect(sup.current()).toMatchObject([{ state: "failed", message: "port 20001 is in use by another process" }]);
  });

  it("starts a shard on the port of one it replaces once that one has stopped, not failing it meanwhile", async () => {
    // a replica re-placed on this node: the new shard got the port the old one (being stopped) still runs on
    const sup = await readyA();
    const old = w.engines[0]!;
    const next = makeShard({ shardId: "r7-s0", replicaId: "r7", httpPort: A.httpPort });
    sup.setDesired([next]);
    await sup.tick();
    expect(sup.current().find((r) => r.shardId === "r7-s0")).toMatchObject({
      state: "pending",
      message: "waiting for port 20001: shard r1-s0 still runs on it",
    });
    await sup.settled();
    expect(old.alive).toBe(false);
    w.advance(1000);
    await sup.tick();
    expect(w.live().map((e) => e.port)).toEqual([A.httpPort]);
    expect(sup.current()).toMatchObject([{ shardId: "r7-s0", state: "starting" }]);
  });

  it("fails a shard the node cannot run now, with the check's reason", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([A, B], (s) => (s.shardId === "r1-s0" ? "GPU 3 is not present on this node" : undefined));
    await sup.tick();
    expect(w.engines.map((e) => e.port)).toEqual([B.httpPort]);
    expect(sup.current()).toMatchObject([
      { shardId: "r1-s0", state: "failed", message: "GPU 3 is not present on this node" },
      { shardId: "r2-s0", state: "starting" },
    ]);
  });

  it("never runs two passes at once", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([A]);
    await Promise.all([sup.tick(), sup.tick(), sup.tick()]);
    expect(w.engines).toHaveLength(1);
  });
});

describe("supervisor: failures", () => {
  it("restarts a crashed engine after the backoff, once the clock passes the retry time", async () => {
    const sup = await readyA();
    const first = w.engines[0]!;
    first.alive = false;
    await sup.tick();
    const [r] = sup.takeReports();
    expect(r).toMatchObject({ shardId: "r1-s0", state: "pending" });
    expect(r!.message).toMatch(
      new RegExp(`^engine process ${first.pid} is gone after \\d+ s \\(restart 1 of 2\\); next start in 1 s$`),
    );
    expect(existsSync(recordFile("r1-s0"))).toBe(false);
    expect(sup.running()).toEqual([]);

    await sup.tick(); // the backoff (0.5–1 s) has not passed on the injected clock
    expect(w.engines).toHaveLength(1);
    w.advance(1000);
    await sup.tick();
    expect(w.engines).toHaveLength(2);
    expect(sup.current()).toMatchObject([{ state: "starting" }]);
    expect(readRecord("r1-s0")).toMatchObject({ pid: w.engines[1]!.pid, restarts: 1 });
  });

  it("reports the exit status of an engine that exited", async () => {
    const sup = await readyA();
    w.engines[0]!.exit({ exitCode: 3, signal: null, message: "exited with status 3" });
    await sup.tick();
    expect(sup.takeReports()).toMatchObject([
      { state: "pending", exitCode: 3, message: expect.stringMatching(/^exit 3 after \d+ s \(restart 1 of 2\)/) },
    ]);
  });

  it("reports how long it ran and its log's last lines, colour codes and progress redraws removed", async () => {
    const sup = await readyA();
    const e = w.engines[0]!;
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    mkdirSync(dirname(e.log), { recursive: true });
    writeFileSync(
      e.log,
      `${lines.join("\n")}\nLoading 10%\rLoading 99%\n\u001b[31mRuntimeError: CUDA out of memory\u001b[0m\n`,
    );
    w.advance(42_000);
    e.exit({ exitCode: 1, signal: null, message: "exited with status 1" });
    await sup.tick();
    const [r] = sup.takeReports();
    expect(r!.failure).toMatchObject({ reason: "exit 1", exitCode: 1, restart: 1, restartLimit: 2, gaveUp: false });
    expect(r!.failure!.ranS).toBeGreaterThanOrEqual(42);
    expect(r!.failure!.logTail).toEqual([...lines.slice(-18), "Loading 99%", "RuntimeError: CUDA out of memory"]);
    expect(r!.message).toMatch(
      /^exit 1 after \d+ s \(restart 1 of 2\): RuntimeError: CUDA out of memory; next start in/,
    );
    // the next report of the shard (it starts again) carries no failure: the control plane keeps the last one
    w.advance(60_000);
    await sup.tick();
    expect(sup.takeReports()).toMatchObject([{ state: "starting" }]);
    expect(sup.takeReports().some((x) => x.failure)).toBe(false);
  });

  it("gives up past the restart limit and spawns no more", async () => {
    const sup = await readyA({ restartLimit: 2 });
    for (let i = 1; i <= 2; i++) {
      w.engines.at(-1)!.alive = false;
      await sup.tick();
      expect(sup.current()[0]!.message).toContain(`restart ${i} of 2`);
      w.advance(10_000);
      await sup.tick();
      expect(w.engines).toHaveLength(i + 1);
    }
    w.engines.at(-1)!.alive = false;
    await sup.tick();
    expect(sup.takeReports()).toMatchObject([
      { state: "failed", message: expect.stringMatching(/ is gone after \d+ s \(gave up after 2 restarts\)$/) },
    ]);
    for (let i = 0; i < 3; i++) {
      w.advance(3_600_000);
      await sup.tick();
    }
    expect(w.engines).toHaveLength(3);
    expect(states(sup)).toEqual({ "r1-s0": "failed" });
  });

  it("says 'restart' (singular) with a limit of one", async () => {
    const sup = await readyA({ restartLimit: 1 });
    w.engines[0]!.alive = false;
    await sup.tick();
    w.advance(10_000);
    await sup.tick();
    w.engines[1]!.alive = false;
    await sup.tick();
    expect(sup.current()[0]!.message).toMatch(/\(gave up after 1 restart\)$/);
  });

  it("stops and restarts an engine that is not ready within its startup timeout", async () => {
    const shard = makeShard({ shardId: "slow", profile: { startupTimeoutS: 10 } });
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([shard]);
    await sup.tick();
    const e = w.engines[0]!;
    w.advance(10_000);
    await sup.tick();
    expect(w.stops).toEqual([]); // exactly the limit is not past it
    w.advance(1);
    await sup.tick();
    expect(w.stops).toEqual([e.pid]);
    expect(sup.current()).toMatchObject([
      {
        state: "pending",
        message: expect.stringMatching(/^not ready within 10 s \(startup timeout\) after \d+ s \(restart 1 of 2\)/),
      },
    ]);
    w.advance(1000);
    await sup.tick();
    expect(w.live().map((x) => x.pid)).toEqual([w.engines[1]!.pid]);
  });

  it("stops and restarts an engine whose probe says it is dead", async () => {
    const sup = await readyA();
    const e = w.engines[0]!;
    w.probes.set(A.httpPort, PROBE.broken);
    await sup.tick();
    expect(w.stops).toEqual([e.pid]);
    expect(sup.current()).toMatchObject([
      {
        state: "pending",
        message: expect.stringMatching(/^health check failed \(HTTP 500\) after \d+ s \(restart 1 of 2\)/),
      },
    ]);
    w.probes.set(A.httpPort, PROBE.ok);
    w.advance(1000);
    await sup.tick();
    expect(w.engines).toHaveLength(2);
  });

  it("treats a ready engine that stops answering as a blip (its pid tells a crash)", async () => {
    const sup = await readyA();
    w.probes.set(A.httpPort, PROBE.refused);
    w.advance(3_600_000);
    await sup.tick();
    expect(states(sup)).toEqual({ "r1-s0": "ready" });
    expect(w.stops).toEqual([]);
  });
});

describe("supervisor: unhealthy after ready", () => {
  it("takes a ready engine that answers 503 out of routing (reported loading, why), and back when it answers 200", async () => {
    const sup = await readyA();
    sup.takeReports();
    w.probes.set(A.httpPort, PROBE.loading);
    await sup.tick();
    expect(sup.current()).toMatchObject([
      {
        state: "loading",
        message: "unhealthy: /health answered HTTP 503 after ready; out of routing until it answers 2xx",
      },
    ]);
    expect(sup.takeReports().map((r) => r.state)).toEqual(["loading"]);
    // a refused probe meanwhile changes nothing, and no startup timeout applies to an engine that served
    w.probes.set(A.httpPort, PROBE.refused);
    w.advance(A.profile.startupTimeoutS * 1000 - 1);
    await sup.tick();
    expect(states(sup)).toEqual({ "r1-s0": "loading" });
    w.probes.set(A.httpPort, PROBE.ok);
    await sup.tick();
    expect(states(sup)).toEqual({ "r1-s0": "ready" });
    expect(w.stops).toEqual([]);
  });

  it("restarts an engine that stays unhealthy longer than its startup timeout", async () => {
    const sup = await readyA();
    const e = w.engines[0]!;
    w.probes.set(A.httpPort, PROBE.loading);
    await sup.tick();
    w.advance(A.profile.startupTimeoutS * 1000 + 1);
    await sup.tick();
    expect(w.stops).toEqual([e.pid]);
    expect(sup.current()).toMatchObject([
      {
        state: "pending",
        message: expect.stringMatching(/^unhealthy for more than \d+ s after \d+ s \(restart 1 of 2\)/),
      },
    ]);
  });
});

describe("supervisor: changes and removals", () => {
  it("replaces an engine whose fingerprint changed: the old one stopped, then the new one spawned", async () => {
    const sup = await readyA();
    const old = w.engines[0]!;
    w.probes.delete(A.httpPort);
    const changed = { ...A, fingerprint: "fp-2", profile: { ...A.profile, args: ["--max-model-len", "8192"] } };
    sup.setDesired([changed]);
    await sup.tick();
    expect(w.stops).toEqual([old.pid]);
    expect(w.engines).toHaveLength(2);
    expect(w.live().map((e) => e.pid)).toEqual([w.engines[1]!.pid]);
    expect(w.lines).toContain("shard r1-s0: stopped (replaced: the profile changed)");
    expect(sup.takeReports()).toMatchObject([{ shardId: "r1-s0", state: "starting" }]);
    expect(readRecord("r1-s0")).toMatchObject({ pid: w.engines[1]!.pid, shard: { fingerprint: "fp-2" } });
  });

  it("drains a ready engine no longer desired, then stops it and forgets it", async () => {
    const sup = await readyA();
    const seen: string[] = [];
    let asked = 0;
    w.inflight = () => {
      seen.push(sup.current()[0]?.state ?? "none");
      return ++asked === 1 ? 2 : 0;
    };
    sup.setDesired([]);
    await sup.tick();
    await sup.settled();
    expect(seen).toEqual(["draining", "draining"]);
    expect(w.stops).toEqual([w.engines[0]!.pid]);
    expect(sup.takeReports()).toMatchObject([
      { shardId: "r1-s0", state: "stopped", message: "no longer assigned to this node" },
    ]);
    expect(sup.current()).toEqual([]);
    expect(existsSync(recordFile("r1-s0"))).toBe(false);
    expect(w.lines).toContain("shard r1-s0: draining (no longer assigned to this node)");
  });

  it("stops a drained engine at the drain timeout even with requests in flight", async () => {
    const sup = await readyA({ drainTimeoutMs: 5000 });
    w.inflight = () => {
      w.advance(5000);
      return 7;
    };
    sup.setDesired([]);
    await sup.tick();
    await sup.settled();
    expect(w.stops).toHaveLength(1);
    expect(sup.current()).toEqual([]);
  });

  it("tries a stop that failed again on the next pass", async () => {
    const sup = await readyA();
    w.stopError = "kill EPERM";
    sup.setDesired([]);
    await sup.tick();
    await sup.settled();
    expect(w.lines).toContain("shard r1-s0: stop failed: Error: kill EPERM");
    expect(w.engines[0]!.alive).toBe(true);
    w.stopError = undefined;
    await sup.tick();
    await sup.settled();
    expect(w.stops).toEqual([w.engines[0]!.pid, w.engines[0]!.pid]);
    expect(w.live()).toEqual([]);
    expect(sup.current()).toEqual([]);
  });

  it("forgets a failed shard that is no longer desired", async () => {
    w.busyPorts.add(A.httpPort);
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([A]);
    await sup.tick();
    sup.setDesired([]);
    await sup.tick();
    await sup.settled();
    expect(sup.current()).toEqual([]);
    expect(w.stops).toEqual([]);
  });

  it.each([
    { name: "the same spec", again: A },
    { name: "a new spec on another port", again: { ...A, httpPort: 20009, fingerprint: "fp-2" } },
  ])(
    "starts a shard assigned again while its old engine drains ($name) once that engine has stopped",
    async ({ again }) => {
      const sup = await readyA();
      const old = w.engines[0]!;
      w.probes.clear();
      let inflight = 3;
      w.inflight = () => inflight;
      sup.setDesired([]);
      await sup.tick();
      expect(states(sup)).toEqual({ "r1-s0": "draining" });
      sup.setDesired([again]);
      await sup.tick();
      inflight = 0;
      await until(
        async () => {
          await sup.tick();
          await sup.settled();
          return !old.alive && states(sup)["r1-s0"] === "starting";
        },
        2000,
        "the shard to start again",
      ).catch((e) => Promise.reject(new Error(`${e.message}; log: ${w.lines.join(" | ")}`)));
      await sup.tick();
      expect(w.lines.filter((l) => l.includes("failed"))).toEqual([]);
      expect(w.live().map((e) => e.port)).toEqual([again.httpPort]);
      expect(sup.running().map((r) => r.pid)).toEqual([w.live()[0]!.pid]);
      expect(readRecord("r1-s0")).toMatchObject({ pid: w.live()[0]!.pid, shard: { fingerprint: again.fingerprint } });
    },
  );
});

describe("supervisor: adopted engines", () => {
  it("keeps an adopted engine the control plane does not want until the grace passes, then stops it", async () => {
    const e = w.engine(A.httpPort);
    const rec = makeRecord("r1-s0", { pid: e.pid, startTime: e.startTime, state: "ready" }, { httpPort: A.httpPort });
    const sup = fakeSupervisor(t.dir, w, { adoptGraceMs: 60_000 }, [rec]);
    w.probes.set(A.httpPort, PROBE.ok);
    expect(sup.running()).toMatchObject([{ shardId: "r1-s0", pid: e.pid, state: "ready" }]);

    sup.setDesired([]);
    await sup.tick();
    expect(w.stops).toEqual([]);
    expect(readRecord("r1-s0").unwantedSince).toBe(w.clock);
    w.advance(59_999);
    await sup.tick();
    await sup.settled();
    expect(w.stops).toEqual([]);
    expect(states(sup)).toEqual({ "r1-s0": "ready" });

    w.advance(1);
    await sup.tick();
    await sup.settled();
    expect(w.stops).toEqual([e.pid]);
    expect(sup.current()).toEqual([]);
    expect(existsSync(recordFile("r1-s0"))).toBe(false);
    expect(w.engines).toHaveLength(1); // nothing spawned
  });

  it("counts the grace from the time recorded by an earlier agent", async () => {
    const e = w.engine(A.httpPort);
    const rec = makeRecord(
      "r1-s0",
      { pid: e.pid, startTime: e.startTime, unwantedSince: w.clock - 60_000 },
      { httpPort: A.httpPort },
    );
    const sup = fakeSupervisor(t.dir, w, { adoptGraceMs: 60_000 }, [rec]);
    sup.setDesired([]);
    await sup.tick();
    await sup.settled();
    expect(w.stops).toEqual([e.pid]);
  });

  it("keeps an adopted engine that is in the desired set: no spawn, no stop, its grace cleared", async () => {
    const e = w.engine(A.httpPort);
    const rec = makeRecord(
      "r1-s0",
      { pid: e.pid, startTime: e.startTime, state: "ready", unwantedSince: w.clock - 1000 },
      { httpPort: A.httpPort, fingerprint: A.fingerprint },
    );
    w.probes.set(A.httpPort, PROBE.ok);
    const sup = fakeSupervisor(t.dir, w, { adoptGraceMs: 60_000 }, [rec]);
    sup.setDesired([A]);
    await sup.tick();
    w.advance(3_600_000);
    sup.setDesired([A]);
    await sup.tick();
    await sup.settled();
    expect(w.engines).toHaveLength(1);
    expect(w.stops).toEqual([]);
    expect(states(sup)).toEqual({ "r1-s0": "ready" });
    expect(readRecord("r1-s0").unwantedSince).toBeUndefined();
    // claimed: once no longer desired it is retired at once, without a grace
    sup.setDesired([]);
    await sup.tick();
    await sup.settled();
    expect(w.stops).toEqual([e.pid]);
  });

  it("unclaim(): an engine the control plane asked for is kept through the grace once it says it lost its state", async () => {
    const sup = fakeSupervisor(t.dir, w, { adoptGraceMs: 60_000 });
    sup.setDesired([A]);
    await sup.tick();
    const e = w.live()[0]!;
    sup.unclaim();
    sup.setDesired([]);
    await sup.tick();
    await sup.settled();
    expect(w.stops).toEqual([]);
    expect(readRecord("r1-s0").unwantedSince).toBe(w.clock);
    // adopted back: wanted again, and claimed (no grace once it leaves the set for good)
    sup.setDesired([A]);
    await sup.tick();
    sup.setDesired([]);
    await sup.tick();
    await sup.settled();
    expect(w.stops).toEqual([e.pid]);
  });

  it("watches adopted engines before the first desired set arrives", async () => {
    const e = w.engine(A.httpPort);
    const sup = fakeSupervisor(t.dir, w, {}, [
      makeRecord("r1-s0", { pid: e.pid, startTime: e.startTime }, { httpPort: A.httpPort }),
    ]);
    e.alive = false;
    await sup.tick();
    expect(sup.current()).toMatchObject([
      { state: "pending", message: expect.stringContaining(`engine process ${e.pid} is gone`) },
    ]);
  });
});

describe("supervisor: what it tells", () => {
  it("lists live engines in running(), as registration reports them", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([A, B], (s) => (s === B ? "no" : undefined));
    await sup.tick();
    const e = w.engines[0]!;
    expect(sup.running()).toEqual([
      {
        shardId: "r1-s0",
        replicaId: "r1",
        rank: 0,
        state: "starting",
        fingerprint: "fp-1",
        httpPort: 20001,
        pid: e.pid,
        startedAt: w.clock,
        spec: A,
      },
    ]);
  });

  it("requeues unsent reports unless a newer one for the shard is waiting", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([A, B]);
    await sup.tick();
    const unsent = sup.takeReports();
    expect(unsent.map((r) => r.state)).toEqual(["starting", "starting"]);
    w.probes.set(A.httpPort, PROBE.ok);
    await sup.tick();
    sup.requeue(unsent);
    expect(sup.takeReports().map((r) => [r.shardId, r.state])).toEqual([
      ["r1-s0", "ready"],
      ["r2-s0", "starting"],
    ]);
    expect(sup.takeReports()).toEqual([]);
  });

  it("caps each engine's log in the state dir on every pass", async () => {
    const sup = fakeSupervisor(t.dir, w, { logMaxBytes: 10 });
    sup.setDesired([A]);
    mkdirSync(join(t.dir, "logs"), { recursive: true });
    writeFileSync(join(t.dir, "logs", "r1-s0.log"), "a long line of engine output\n");
    await sup.tick();
    expect(readFileSync(join(t.dir, "logs", "r1-s0.log.1"), "utf8")).toBe("a long line of engine output\n");
    expect(readFileSync(join(t.dir, "logs", "r1-s0.log"), "utf8")).toBe("");
    expect((await readRecords(t.dir)).records).toHaveLength(1);
  });
});
