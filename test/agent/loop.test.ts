import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../agent/client.js";
import { parseAgentConfig } from "../../agent/config.js";
import { type LoopDeps, runLoop } from "../../agent/loop.js";
import { openSession } from "../../agent/session.js";
import { tempDir } from "../helpers/db.js";
import { H100_XML, inventoryFromCapture } from "../helpers/inventory.js";
import { until } from "../helpers/process.js";
import { fakeControlPlane, problem } from "./control-plane.js";
import { makeShard } from "./engines/shard.js";
import { fakeSupervisor, fakeWorld, type World } from "./supervisor/fake-ops.js";

const CP = "http://cp.test";
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const INV = inventoryFromCapture(H100_XML);

let t: ReturnType<typeof tempDir>;
let cp: ReturnType<typeof fakeControlPlane>;
let w: World;
let lines: string[];
let ac: AbortController;
let running: Promise<void> | undefined;
let _discoveries: number;
let discover: () => Promise<typeof INV>;

beforeEach(() => {
  t = tempDir();
  cp = fakeControlPlane(CP);
  server.use(...cp.handlers);
  w = fakeWorld();
  lines = [];
  ac = new AbortController();
  running = undefined;
  _discoveries = 0;
  discover = async () => {
    _discoveries++;
    return INV;
  };
});
afterEach(async () => {
  ac.abort();
  await running;
  t.cleanup();
});

/**
 * Starts the loop against the fake control plane and a supervisor over fake engines (`tick` in place of its own; `over`
 * in place of the test's loop settings).
 */
async function start(tick?: (own: () => Promise<void>) => Promise<void>, over: Partial<LoopDeps> = {}) {
  const cfg = parseAgentConfig(`state_dir: ${t.dir}\njoin_token: llmgw_join_j\n`);
  const client = createClient({ server: CP });
  const log = (l: string) => lines.push(l);
  const session = await openSession({
    cfg,
    id: { server: CP, nodeId: "n1", hostname: "n1", mgmtAddr: "10.0.0.11" },
    client,
    log,
    now: Date.now,
  });
  const supervisor = fakeSupervisor(t.dir, w);
  if (tick) {
    const own = supervisor.tick.bind(supervisor);
    supervisor.tick = () => tick(own);
  }
  running = runLoop(
    {
      nodeId: "n1",
      session,
      client,
      supervisor,
      discover: () => discover(),
      log,
      checkIntervalMs: 50,
      reconcileIntervalMs: 20,
      backoff: { baseMs: 5, maxMs: 20 },
      minPollIntervalMs: 5,
      ...over,
    },
    ac.signal,
  );
  return { supervisor, session };
}

const waitFor = (what: string, cond: () => boolean, ms = 3000) =>
  until(async () => cond(), ms, what).catch((e: Error) =>
    Promise.reject(new Error(`${e.message}; log:\n${lines.join("\n")}`)),
  );
const pollIndexes = () => cp.of("poll").map((c) => Number(c.url.searchParams.get("index")));

describe("agent loop", () => {
  it("registers, polls, starts what is assigned and reports it", async () => {
    cp.assignments = { index: 3, shards: [makeShard({ shardId: "r1-s0", httpPort: 20001 })] };
    await start();
    await waitFor("a status report", () => cp.of("status").length > 0);
    expect(cp.calls[0]!.kind).toBe("register");
    expect(cp.calls[0]!.auth).toBe("Bearer llmgw_join_j");
    const poll = cp.of("poll")[0]!;
    expect(poll.auth).toBe("Bearer llmgw_node_1");
    expect(Object.fromEntries(poll.url.searchParams)).toEqual({ index: "0", wait: "1" });
    expect(w.engines).toHaveLength(1);
    expect(cp.of("status")[0]!.body).toMatchObject({ shards: [{ shardId: "r1-s0", state: "starting" }] });
    await waitFor("a poll at the new index", () => pollIndexes().includes(3));
  });

  it("survives 500s and garbage answers: one line each, and it keeps polling", async () => {
    cp.next.poll.push(
      () => problem(500, "internal", "database is locked"),
      () => HttpResponse.text("<html>proxy error</html>"),
      () => HttpResponse.json({ index: "three" }),
    );
    await start();
    await waitFor("polls after the failures", () => cp.of("poll").length >= 6);
    const retries = lines.filter((l) => l.includes("retrying in"));
    expect(retries).toHaveLength(3);
    expect(retries[0]).toMatch(
      /^control plane: GET \/api\/v1\/agents\/n1\/assignments\?index=0&wait=1: HTTP 500: database is locked; retrying in 0\.0\d? s$/,
    );
    expect(retries[1]).toMatch(/HTTP 200 with a body that is not JSON: <html>proxy error<\/html>; retrying in/);
    expect(retries[2]).toMatch(/unexpected answer \(index: .*; retrying in/);
    expect(retries.every((l) => !l.includes("\n"))).toBe(true);
    expect(cp.of("register")).toHaveLength(1); // a 500 is no reason to register again
  });

  it("registers again after a 401 on poll and polls with the new token", async () => {
    cp.next.poll.push(() => problem(401, "unauthorized", "unknown node token"));
    await start();
    await waitFor(
      "a second registration and a poll after it",
      () => cp.of("register").length === 2 && cp.of("poll").some((c) => c.auth === "Bearer llmgw_node_2"),
    );
    expect(cp.of("register")[1]!.auth).toBe("Bearer llmgw_node_1");
    expect(lines.some((l) => l.startsWith("control plane: ") && l.includes("HTTP 401: unknown node token"))).toBe(true);
  });

  it("follows an assignment index that goes backwards, registering again to report its engines", async () => {
    cp.assignments = { index: 5, shards: [] };
    await start();
    await waitFor("a poll at index 5", () => pollIndexes().includes(5));
    cp.assignments = { index: 2, shards: [] };
    await waitFor("a poll at index 2", () => pollIndexes().includes(2));
    expect(lines).toContain("assignment index went backwards (5 → 2); registering again to report the running engines");
    await waitFor("a second registration", () => cp.of("register").length === 2);
    expect(
      pollIndexes()
        .slice(pollIndexes().indexOf(2))
        .every((i) => i === 2),
    ).toBe(true);
  });

  it("after 409 state_behind: registers again with its engines' specs, keeps them and polls from index 0", async () => {
    const shard = makeShard({ shardId: "r1-s0", httpPort: 20001 });
    cp.assignments = { index: 5, shards: [shard] };
    await start();
    await waitFor("a status report", () => cp.of("status").length > 0);
    // every report after a poll names the index it answered, so that an older control plane can refuse it
    expect(cp.of("status")[0]!.index).toBe("5");
    expect(cp.of("register")[0]!.index).toBeNull();
    cp.next.poll.push(() => {
      cp.assignments = { index: 2, shards: [] };
      return problem(409, "state_behind", "its state is older");
    });
    await waitFor("a second registration and a poll at index 2", () => pollIndexes().includes(2));
    const again = cp.of("register")[1]!.body as { runningShards: { shardId: string; spec: unknown }[] };
    expect(again.runningShards).toEqual([expect.objectContaining({ shardId: "r1-s0", spec: shard })]);
    expect(pollIndexes()[pollIndexes().indexOf(2) - 1]).toBe(0);
    expect(w.stops).toEqual([]); // kept through the adopt grace while the control plane decides
  });

  it("keeps status reports that could not be sent and sends them later", async () => {
    cp.assignments = { index: 1, shards: [makeShard({ shardId: "r1-s0", httpPort: 20001 })] };
    cp.next.status.push(() => problem(503, "unavailable", "try later"));
    await start();
    await waitFor("a second status report", () => cp.of("status").length >= 2);
    expect(
      lines.some((l) => l.startsWith("status report failed (kept for the next try): ") && l.includes("try later")),
    ).toBe(true);
    expect(cp.of("status")[1]!.body).toMatchObject({ shards: [{ shardId: "r1-s0", state: "starting" }] });
  });

  it("sends a due heartbeat between two polls, each poll waiting no longer than until the next is due", async () => {
    cp.registration = { ...cp.registration, heartbeatIntervalS: 1, pollWaitS: 30 };
    cp.pollWaitMs = 60_000; // a poll is held for 90 % of its wait, as the API may answer
    cp.waitShare = 0.9;
    await start();
    await waitFor("three heartbeats", () => cp.of("heartbeat").length >= 3, 6000);
    const [registered] = cp.of("register");
    const beats = cp.of("heartbeat");
    // none sent beside a held poll (the discovery timer, every 50 ms here, leaves them to the poll loop) ...
    expect(beats.map((b) => b.pollsHeld)).toEqual(beats.map(() => 0));
    // ... none much before its time ...
    expect(beats[0]!.at - registered!.at).toBeGreaterThanOrEqual(850);
    // ... and the polls asked to wait until the next was due, not the API's 30 s
    expect(new Set(cp.of("poll").map((p) => p.url.searchParams.get("wait")))).toEqual(new Set(["1"]));
  });

  it("goes on polling while its heartbeats are refused, trying them again after a back-off", async () => {
    cp.registration = { ...cp.registration, heartbeatIntervalS: 1, pollWaitS: 30 };
    cp.pollWaitMs = 60_000;
    cp.next.heartbeat.push(
      () => problem(503, "database_busy"),
      () => problem(503, "database_busy"),
    );
    // the loop's own back-off after a failed call is 2–4 s here: polls must not wait for it
    await start(undefined, { backoff: { baseMs: 4000, maxMs: 4000 } });
    await waitFor("a heartbeat accepted after two refused", () => cp.of("heartbeat").length >= 3, 8000);
    const [refused1, refused2, accepted] = cp.of("heartbeat");
    const nextPoll = (after: { at: number }) => cp.of("poll").find((p) => p.at >= after.at)?.at ?? Infinity;
    // a poll went out at once after each refusal (the assignments do not wait for the heartbeat) ...
    expect(nextPoll(refused1!) - refused1!.at).toBeLessThan(500);
    expect(nextPoll(refused2!) - refused2!.at).toBeLessThan(500);
    expect(nextPoll(refused2!)).toBeLessThan(accepted!.at);
    // ... and each retry came after the heartbeat's own back-off (0.5–1 s, then 1–2 s), not at once
    expect(refused2!.at - refused1!.at).toBeGreaterThanOrEqual(400);
    expect(lines.filter((l) => /^heartbeat failed: .*; polling on, the next try in \d/.test(l))).toHaveLength(2);
  });

  it("sends no heartbeat before it is due when answers come at once (a burst of changes)", async () => {
    cp.registration = { ...cp.registration, heartbeatIntervalS: 2, pollWaitS: 30 };
    await start();
    // every answer a new index: each poll is answered at once
    server.use(
      http.get(`${CP}/api/v1/agents/:node/assignments`, () =>
        HttpResponse.json({ ...cp.assignments, index: cp.assignments.index++ }),
      ),
    );
    const t0 = Date.now();
    await waitFor("1.5 s of answers", () => Date.now() - t0 >= 1500);
    expect(cp.of("heartbeat")).toEqual([]);
  });

  it("sends a due heartbeat from the discovery timer while the poll loop is busy elsewhere", async () => {
    cp.registration = { ...cp.registration, heartbeatIntervalS: 1, pollWaitS: 1 };
    let busy: { from: number; to?: number; over?: Promise<unknown> } | undefined;
    // reconciling takes 2.5 s once (engines draining, one after another): every tick in that time waits for it, the
    // poll loop's after its first answer too
    await start(async (own) => {
      if (!busy) {
        busy = { from: Date.now() };
        busy.over = new Promise((ok) => setTimeout(ok, 2500)).then(() => (busy!.to = Date.now()));
      }
      await busy.over;
      await own();
    });
    await waitFor("the poll loop busy, then back", () => busy?.to !== undefined, 5000);
    const during = cp.of("heartbeat").filter((b) => b.at > busy!.from && b.at < busy!.to!);
    expect(during.length).toBeGreaterThanOrEqual(1);
  });

  it("runs discovery on its timer and survives a discovery that throws", async () => {
    await start();
    discover = async () => {
      _discoveries++;
      throw new Error("nvidia-smi hung\nsecond line");
    };
    await waitFor("two failed discoveries", () => lines.filter((l) => l === "discovery: nvidia-smi hung").length >= 2);
    discover = async () => {
      _discoveries++;
      return INV;
    };
    const before = cp.of("poll").length;
    await waitFor("polling to go on", () => cp.of("poll").length > before + 2);
  });

  it("stops promptly when the signal aborts, even in the middle of a long poll, leaving engines running", async () => {
    cp.assignments = { index: 1, shards: [makeShard({ shardId: "r1-s0", httpPort: 20001 })] };
    cp.pollWaitMs = 2000;
    await start();
    await waitFor("a waiting poll", () => pollIndexes().includes(1));
    const t0 = Date.now();
    ac.abort();
    await running;
    expect(Date.now() - t0).toBeLessThan(500);
    const calls = cp.calls.length;
    expect(w.stops).toEqual([]);
    expect(w.live()).toHaveLength(1);
    expect(lines.filter((l) => l.includes("retrying"))).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(cp.calls.length).toBe(calls);
  });
});
