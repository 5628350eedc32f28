import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNcclReader } from "../../../agent/nccl/parse.js";
import { logPath } from "../../../agent/supervisor/log-file.js";
import { readRecords } from "../../../agent/supervisor/state-files.js";
import { readOn } from "../../../agent/supervisor/transport.js";
import { tempDir } from "../../helpers/db.js";
import { makeShard, twoNodeShard } from "../engines/shard.js";
import { fakeAdapter, fakeSupervisor, fakeWorld, PROBE, type World } from "./fake-ops.js";

const FIXTURES = join(import.meta.dirname, "../../fixtures/nccl");
const excerpt = (f: string) => readFileSync(join(FIXTURES, f), "utf8");
/** A real socket fallback, and a real RoCE run on mlx5_0 and mlx5_1. */
const SOCKET = excerpt("socket-fallback-2.19.3-nccl1267.log");
const IB = excerpt("roce-gdr-disabled-nccl1537.log");

let t: ReturnType<typeof tempDir>;
let w: World;
beforeEach(() => {
  t = tempDir();
  w = fakeWorld();
});
afterEach(() => t.cleanup());

const IB_SHARD = twoNodeShard(0, {
  shardId: "r3-s0",
  replicaId: "r3",
  hcas: ["mlx5_0", "mlx5_1"],
  fabric: "ib:fabric-a",
});
const print = (shardId: string, text: string) => {
  mkdirSync(join(t.dir, "logs"), { recursive: true });
  appendFileSync(logPath(t.dir, shardId), text);
};
const transportOf = (reports: { shardId: string; transport?: unknown }[], id: string) =>
  reports.find((r) => r.shardId === id)?.transport;

describe("supervisor: the transport NCCL chose", () => {
  it("reports a socket fallback of an IB shard as degraded with the reason, and keeps it in the state file", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([IB_SHARD]);
    await sup.tick();
    print(IB_SHARD.shardId, SOCKET);
    await sup.tick();
    const t1 = transportOf(sup.takeReports(), IB_SHARD.shardId);
    expect(t1).toEqual({
      verdict: "degraded",
      expected: "ib:fabric-a (mlx5_0,mlx5_1)",
      via: "NET/Socket",
      observed: "NET/Socket on ens7 (NCCL 2.19.3)",
      reason: "placed on ib:fabric-a (mlx5_0,mlx5_1); NCCL uses NET/Socket on ens7",
      ncclVersion: "2.19.3",
    });
    expect(w.lines.some((l) => l.includes("transport degraded: placed on ib:fabric-a"))).toBe(true);
    expect((await readRecords(t.dir)).records[0]?.transport).toEqual(t1);
    // heartbeats carry it too, and it stays once the engine serves
    w.probes.set(IB_SHARD.httpPort, PROBE.ok);
    await sup.tick();
    expect(sup.current()[0]).toMatchObject({ state: "ready", transport: t1 });
  });

  it("reads only what this run printed: an earlier run's fallback in the same log is not this one's", async () => {
    print(IB_SHARD.shardId, SOCKET);
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([IB_SHARD]);
    await sup.tick();
    print(IB_SHARD.shardId, IB);
    await sup.tick();
    expect(transportOf(sup.takeReports(), IB_SHARD.shardId)).toMatchObject({
      verdict: "ok",
      observed: "NET/IB (RoCE) on mlx5_0, mlx5_1 without GPUDirect RDMA",
    });
  });

  it("is pending while NCCL says nothing and unverified once the engine serves without a word from it", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([IB_SHARD]);
    await sup.tick();
    await sup.tick();
    expect(transportOf(sup.current(), IB_SHARD.shardId)).toMatchObject({ verdict: "pending" });
    w.probes.set(IB_SHARD.httpPort, PROBE.ok);
    await sup.tick();
    expect(transportOf(sup.current(), IB_SHARD.shardId)).toMatchObject({
      verdict: "unverified",
      reason: expect.stringMatching(/^placed on ib:fabric-a \(mlx5_0,mlx5_1\); no NCCL lines/),
    });
    // judged while serving: later lines (a request's log) are not read again
    print(IB_SHARD.shardId, SOCKET);
    await sup.tick();
    expect(transportOf(sup.current(), IB_SHARD.shardId)).toMatchObject({ verdict: "unverified" });
  });

  it("reads all an engine printed before it served (more than one read's worth, rotated meanwhile) before the verdict is final", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([IB_SHARD]);
    await sup.tick();
    // a chatty start: 1.5 MiB of the engine's own lines, then NCCL's fallback
    print(IB_SHARD.shardId, `${"INFO loading weights shard 1 of 64 ...\n".repeat(40_000)}${SOCKET}`);
    w.probes.set(IB_SHARD.httpPort, PROBE.ok);
    await sup.tick();
    expect(transportOf(sup.current(), IB_SHARD.shardId)).toMatchObject({ verdict: "pending" });
    await sup.tick();
    expect(transportOf(sup.current(), IB_SHARD.shardId)).toMatchObject({ verdict: "degraded" });
  });

  it("a restart reads the new run afresh", async () => {
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([IB_SHARD]);
    await sup.tick();
    print(IB_SHARD.shardId, SOCKET);
    await sup.tick();
    w.engines[0]!.exit({ exitCode: 1, signal: null, message: "exit 1" });
    await sup.tick();
    w.advance(5_000);
    await sup.tick();
    expect(w.live()).toHaveLength(1);
    // the last run's verdict went with it
    expect(transportOf(sup.current(), IB_SHARD.shardId)).toBeUndefined();
    await sup.tick();
    expect(transportOf(sup.current(), IB_SHARD.shardId)).toMatchObject({ verdict: "pending" });
    print(IB_SHARD.shardId, IB);
    await sup.tick();
    expect(transportOf(sup.current(), IB_SHARD.shardId)).toMatchObject({ verdict: "ok" });
  });

  it("reads a headless rank (no HTTP) until NCCL has said which transport it uses", async () => {
    const headless = twoNodeShard(1, { shardId: "r6-s1", replicaId: "r6", httpPort: 20006 });
    const w2 = fakeWorld();
    w2.ops.adapter = () => ({ ...fakeAdapter, healthPath: () => null });
    const sup = fakeSupervisor(t.dir, w2);
    sup.setDesired([headless]);
    await sup.tick();
    await sup.tick();
    expect(sup.current()[0]).toMatchObject({ state: "ready", transport: { verdict: "pending" } });
    print(headless.shardId, SOCKET);
    await sup.tick();
    expect(transportOf(sup.current(), headless.shardId)).toMatchObject({ verdict: "degraded" });
  });

  it("settles a silent headless rank as unverified after its startup timeout, and at once when the profile sets NCCL_DEBUG", async () => {
    const quiet = twoNodeShard(1, {
      shardId: "r8-s1",
      replicaId: "r8",
      httpPort: 20008,
      profile: { startupTimeoutS: 60 },
    });
    const own = twoNodeShard(1, {
      shardId: "r9-s1",
      replicaId: "r9",
      httpPort: 20009,
      profile: { env: { NCCL_DEBUG: "WARN" } },
    });
    const w2 = fakeWorld();
    w2.ops.adapter = () => ({ ...fakeAdapter, healthPath: () => null });
    const sup = fakeSupervisor(t.dir, w2);
    sup.setDesired([quiet, own]);
    await sup.tick();
    await sup.tick();
    expect(transportOf(sup.current(), quiet.shardId)).toMatchObject({ verdict: "pending" });
    expect(transportOf(sup.current(), own.shardId)).toMatchObject({ verdict: "unverified" });
    w2.advance(61_000);
    await sup.tick();
    expect(transportOf(sup.current(), quiet.shardId)).toMatchObject({ verdict: "unverified" });
  });

  it("a one-GPU shard is not read at all, a one-node TP shard reports what it uses inside the node", async () => {
    const one = makeShard({ shardId: "r4-s0", replicaId: "r4", deviceIds: [0], visibleDevices: "0", httpPort: 20004 });
    const tp = makeShard({ shardId: "r5-s0", replicaId: "r5", httpPort: 20005 });
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([one, tp]);
    await sup.tick();
    print(one.shardId, excerpt("shm-nccl1817.log"));
    print(tp.shardId, excerpt("shm-nccl1817.log"));
    await sup.tick();
    const reports = sup.current();
    expect(transportOf(reports, one.shardId)).toBeUndefined();
    expect(transportOf(reports, tp.shardId)).toEqual({
      verdict: "local",
      expected: "single",
      via: "SHM",
      observed: "SHM inside the node",
    });
  });
});

it("keeps an adopted engine's transport from its state file", async () => {
  const w1 = fakeWorld();
  const d = tempDir();
  try {
    const first = fakeSupervisor(d.dir, w1);
    first.setDesired([IB_SHARD]);
    await first.tick();
    mkdirSync(join(d.dir, "logs"), { recursive: true });
    writeFileSync(logPath(d.dir, IB_SHARD.shardId), SOCKET);
    await first.tick();
    const { records } = await readRecords(d.dir);
    const again = fakeSupervisor(d.dir, w1, {}, records);
    expect(again.current()[0]?.transport).toMatchObject({ verdict: "degraded" });
    // and says it at registration, with the engines it runs
    expect(again.running()[0]?.transport).toMatchObject({ verdict: "degraded" });
  } finally {
    d.cleanup();
  }
});

describe("readOn", () => {
  it("reads a log in bounded pieces, each line once, and the rest of a rotated generation before the new one", async () => {
    const d = tempDir();
    try {
      const path = join(d.dir, "x.log");
      writeFileSync(path, SOCKET);
      const c = { reader: createNcclReader(), offset: 0, partial: "" };
      const reads: boolean[] = [];
      while (!(reads.at(-1) ?? false)) reads.push(await readOn(path, c, 100));
      expect(reads.length).toBe(Math.ceil(Buffer.byteLength(SOCKET) / 100));
      expect(c.reader.observation().socketInterfaces).toEqual(["ens7"]);
      // rotated as capLog does: the old content moves to .1 (with what was not read yet), the log starts again
      const r = { reader: createNcclReader(), offset: 0, partial: "" };
      writeFileSync(path, "INFO starting\n");
      await readOn(path, r);
      appendFileSync(path, IB);
      writeFileSync(`${path}.1`, readFileSync(path));
      writeFileSync(path, "");
      expect(await readOn(path, r)).toBe(false);
      expect(r.reader.observation().ibDevices.map((x) => x.name)).toEqual(["mlx5_0", "mlx5_1"]);
    } finally {
      d.cleanup();
    }
  });
});
