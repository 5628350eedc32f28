// One unusable shard in an assignments answer (an id that cannot name a file, a port out of range, a malformed
// shard) is refused alone and reported failed with why; the rest of the answer, the pass and the poll loop go on.
// And a control plane that answers every long-poll at once does not make the agent spin.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClient, readShards } from "../../agent/client.js";
import { parseAgentConfig } from "../../agent/config.js";
import { runLoop } from "../../agent/loop.js";
import { runOnce } from "../../agent/once.js";
import { openSession } from "../../agent/session.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import { tempDir } from "../helpers/db.js";
import { H100_XML, inventoryFromCapture } from "../helpers/inventory.js";
import { until } from "../helpers/process.js";
import { fakeControlPlane } from "./control-plane.js";
import { makeShard } from "./engines/shard.js";
import { fakeSupervisor, fakeWorld, type World } from "./supervisor/fake-ops.js";

const GOOD = makeShard({ shardId: "r1-s0", replicaId: "r1", httpPort: 20001 });
const withPort = (shardId: string, httpPort: number) => ({ ...makeShard({ shardId, replicaId: "r9" }), httpPort });

describe("reading an assignments answer", () => {
  it.each([
    ["a port above 65535", withPort("r2-s0", 99999), { shardId: "r2-s0", replicaId: "r9" }, /httpPort: Too big/],
    ["a negative port", withPort("r3-s0", -1), { shardId: "r3-s0", replicaId: "r9" }, /httpPort: Too small/],
    ["port 0", withPort("r4-s0", 0), { shardId: "r4-s0", replicaId: "r9" }, /httpPort: Too small/],
    [
      "a missing profile",
      { ...GOOD, shardId: "r5-s0", profile: undefined },
      { shardId: "r5-s0", replicaId: "r1" },
      /profile: /,
    ],
    ["a 65-character id", { ...GOOD, shardId: "x".repeat(65) }, { replicaId: "r1" }, /shardId: Too big/],
    ["no object at all", "r6-s0", {}, /shard: /],
  ])("refuses %s alone, with its reason", (_, bad, ids, reason) => {
    const { shards, refused } = readShards([bad, GOOD]);
    expect(shards).toEqual([GOOD]);
    expect(refused).toEqual([{ ...ids, reason: expect.stringMatching(reason) }]);
    expect(refused[0]!.reason).toMatch(/^unusable assignment \(shards\.0\): /);
  });

  it("uses the first of two shards with one id and refuses the other without naming it (it runs)", () => {
    const { shards, refused } = readShards([GOOD, { ...GOOD, httpPort: 20002 }]);
    expect(shards).toEqual([GOOD]);
    expect(refused).toEqual([{ reason: "shard id r1-s0 is in the answer twice (shards.1): the first is used" }]);
  });
});

describe("supervisor: refused shards", () => {
  let t: ReturnType<typeof tempDir>;
  let w: World;
  beforeEach(() => {
    t = tempDir();
    w = fakeWorld();
  });
  afterEach(() => t.cleanup());

  it.each(["../../../escaped", "..", "a/b", ".hidden"])(
    "fails a shard whose id %s cannot name a file, and starts the others in the same pass",
    async (shardId) => {
      const sup = fakeSupervisor(t.dir, w);
      sup.setDesired([makeShard({ shardId, replicaId: "r7", httpPort: 20007 }), GOOD]);
      await sup.tick();
      expect(w.engines.map((e) => e.port)).toEqual([20001]);
      const reports = sup.takeReports();
      expect(reports).toContainEqual({
        shardId,
        replicaId: "r7",
        state: "failed",
        at: w.clock,
        message: `refused: shard id ${JSON.stringify(shardId)} cannot name a file`,
      });
      expect(reports.find((r) => r.shardId === "r1-s0")?.state).toBe("starting");
      expect(sup.current().map((r) => [r.shardId, r.state])).toEqual([
        ["r1-s0", "starting"],
        [shardId, "failed"],
      ]);
      expect(readdirSync(join(t.dir, "shards"))).toEqual(["r1-s0.json"]);
      expect(existsSync(join(t.dir, "..", "escaped.json"))).toBe(false);
    },
  );

  it("reports a refusal once while the control plane keeps sending it, and again when the reason changes", async () => {
    const sup = fakeSupervisor(t.dir, w);
    const refused = [
      { shardId: "r2-s0", replicaId: "r2", reason: "unusable assignment (shards.0): httpPort: Too big" },
    ];
    sup.setDesired([GOOD], undefined, refused);
    await sup.tick();
    expect(sup.takeReports().map((r) => [r.shardId, r.state])).toEqual([
      ["r2-s0", "failed"],
      ["r1-s0", "starting"],
    ]);
    sup.setDesired([GOOD], undefined, refused);
    await sup.tick();
    expect(sup.takeReports()).toEqual([]);
    expect(w.lines.filter((l) => l.startsWith("shard r2-s0: failed"))).toHaveLength(1);
    sup.setDesired([GOOD], undefined, [{ ...refused[0]!, reason: "another reason" }]);
    expect(sup.takeReports()).toEqual([
      expect.objectContaining({ shardId: "r2-s0", message: "refused: another reason" }),
    ]);
    sup.setDesired([GOOD]);
    expect(sup.current().map((r) => r.shardId)).toEqual(["r1-s0"]);
  });

  it("fails a shard whose port check throws, and goes on with the next", async () => {
    const portFree = w.ops.portFree;
    w.ops.portFree = async (port) => {
      if (port === 20005) throw new Error("options.port should be >= 0 and < 65536");
      return portFree(port);
    };
    const sup = fakeSupervisor(t.dir, w);
    sup.setDesired([makeShard({ shardId: "r5-s0", replicaId: "r5", httpPort: 20005 }), GOOD]);
    await sup.tick();
    expect(w.engines.map((e) => e.port)).toEqual([20001]);
    expect(Object.fromEntries(sup.current().map((r) => [r.shardId, [r.state, r.message]]))).toMatchObject({
      "r5-s0": ["failed", "options.port should be >= 0 and < 65536"],
      "r1-s0": ["starting", expect.any(String)],
    });
  });
});

describe("agent against a control plane sending unusable shards", () => {
  const CP = "http://cp-bad.test";
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  afterAll(() => server.close());

  let t: ReturnType<typeof tempDir>;
  let cp: ReturnType<typeof fakeControlPlane>;
  let w: World;
  let lines: string[];
  let ac: AbortController;
  let running: Promise<void> | undefined;
  beforeEach(() => {
    t = tempDir();
    cp = fakeControlPlane(CP);
    server.use(...cp.handlers);
    w = fakeWorld();
    lines = [];
    ac = new AbortController();
    running = undefined;
  });
  afterEach(async () => {
    ac.abort();
    await running;
    server.resetHandlers();
    t.cleanup();
  });

  const BAD = [
    withPort("r2-s0", 99999),
    makeShard({ shardId: "../../../../escaped", replicaId: "r3", httpPort: 20003 }),
    withPort("r4-s0", -1),
  ] as unknown as StartShard[];

  async function deps() {
    const cfg = parseAgentConfig(`state_dir: ${t.dir}\njoin_token: llmgw_join_j\n`);
    const client = createClient({ server: CP });
    const log = (l: string) => lines.push(l);
    const id = { server: CP, nodeId: "n1", hostname: "n1", mgmtAddr: "10.0.0.11" };
    const session = await openSession({ cfg, id, client, log, now: Date.now });
    const inv = inventoryFromCapture(H100_XML);
    return { nodeId: "n1", session, client, supervisor: fakeSupervisor(t.dir, w), discover: async () => inv, log };
  }
  const reported = () =>
    Object.fromEntries(
      cp
        .of("status")
        .flatMap((c) => (c.body as { shards: { shardId: string; state: string }[] }).shards)
        .map((s) => [s.shardId, s.state]),
    );

  it("long-running: starts the good shard on the first pass and reports each bad one failed", async () => {
    cp.assignments = { index: 3, shards: [...BAD, GOOD] };
    const d = await deps();
    running = runLoop(
      { ...d, checkIntervalMs: 50, reconcileIntervalMs: 20, backoff: { baseMs: 5, maxMs: 20 }, minPollIntervalMs: 5 },
      ac.signal,
    );
    await until(async () => Object.keys(reported()).length === 4, 3000, "reports of all four shards");
    expect(reported()).toEqual({
      "r1-s0": "starting",
      "r2-s0": "failed",
      "../../../../escaped": "failed",
      "r4-s0": "failed",
    });
    const polls = cp.of("poll").length;
    await until(async () => cp.of("poll").length > polls + 1, 3000, "polling to go on");
    expect(w.engines.map((e) => e.port)).toEqual([20001]);
    expect(lines.filter((l) => l.includes("retrying in"))).toEqual([]);
    expect(existsSync(join(t.dir, "..", "..", "..", "..", "escaped.json"))).toBe(false);
  });

  it("--once: starts the good shard and sends the status report with every shard's state", async () => {
    cp.assignments = { index: 3, shards: [...BAD, GOOD] };
    const summary = await runOnce(await deps());
    expect(summary).toMatch(/1 starting, 3 failed/);
    expect(reported()).toEqual({
      "r1-s0": "starting",
      "r2-s0": "failed",
      "../../../../escaped": "failed",
      "r4-s0": "failed",
    });
    const messages = (cp.of("status")[0]!.body as { shards: { shardId: string; message?: string }[] }).shards;
    expect(messages.find((s) => s.shardId === "r2-s0")?.message).toMatch(/^refused: unusable assignment .*httpPort/);
  });

  it("paces its polls when the control plane answers every long-poll at once", async () => {
    server.use(
      http.get(`${CP}/api/v1/agents/:node/assignments`, ({ request }) => {
        const call = { kind: "poll", auth: null, index: null, url: new URL(request.url), body: undefined } as const;
        cp.calls.push({ ...call, at: Date.now(), pollsHeld: 0 });
        // a loop that spins starves the test's own timer: end it here, so that the test fails rather than hangs
        if (cp.of("poll").length >= 50) ac.abort();
        return HttpResponse.json({ index: 1, shards: [] });
      }),
    );
    const d = await deps();
    const t0 = Date.now();
    running = runLoop(
      { ...d, checkIntervalMs: 60_000, reconcileIntervalMs: 60_000, minPollIntervalMs: 100 },
      ac.signal,
    );
    await new Promise((r) => setTimeout(r, 700));
    ac.abort();
    await running;
    const polls = cp.of("poll").length;
    // one poll per 100 ms at most: without pacing this is thousands
    expect(polls).toBeGreaterThanOrEqual(2);
    expect(polls).toBeLessThanOrEqual(Math.ceil((Date.now() - t0) / 100) + 1);
  });
});
