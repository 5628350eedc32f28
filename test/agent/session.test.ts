import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiCallError, createClient } from "../../agent/client.js";
import { parseAgentConfig } from "../../agent/config.js";
import type { Identity } from "../../agent/identity.js";
import { HeartbeatFailed, needsRegistration, openSession } from "../../agent/session.js";
import { heartbeatOf } from "../../shared/heartbeat-of.js";
import { imexConfigDigest } from "../../shared/imex-config.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { tempDir } from "../helpers/db.js";
import { GB200_XML, inventoryFromCapture } from "../helpers/inventory.js";
import { fakeControlPlane, problem } from "./control-plane.js";

const CP = "http://cp.test";
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const ID: Identity = { server: CP, nodeId: "n1", hostname: "n1.lab", mgmtAddr: "10.0.0.11", mgmtInterface: "eth0" };
const INV = inventoryFromCapture(GB200_XML);
const changed = (f: (i: Inventory) => void) => {
  const c = structuredClone(INV);
  f(c);
  return c;
};

let t: ReturnType<typeof tempDir>;
let cp: ReturnType<typeof fakeControlPlane>;
let clock: number;
let lines: string[];
beforeEach(() => {
  t = tempDir();
  cp = fakeControlPlane(CP);
  server.use(...cp.handlers);
  clock = 1_000_000;
  lines = [];
});
afterEach(() => t.cleanup());

/** A session of node n1 with a state dir in the temp dir and the join token `join` (none when null). */
const open = (join: string | null = "llmgw_join_j") =>
  openSession({
    cfg: parseAgentConfig(`state_dir: ${t.dir}\n${join ? `join_token: ${join}\n` : ""}labels: {rack: r1}\n`),
    id: ID,
    client: createClient({ server: CP }),
    log: (l) => lines.push(l),
    now: () => clock,
  });

describe("session", () => {
  it("runs syncs one at a time: two at once (poll loop and discovery timer) register once", async () => {
    const s = await open();
    expect(await Promise.all([s.sync(INV, [], []), s.sync(INV, [], [])])).toEqual(["registered", "none"]);
    expect(cp.of("register")).toHaveLength(1);
  });

  it("registers at the first sync with the join token and keeps the node token (mode 0600)", async () => {
    const s = await open();
    expect(await s.sync(INV, [], [])).toBe("registered");
    const [reg] = cp.of("register");
    expect(reg!.auth).toBe("Bearer llmgw_join_j");
    expect(reg!.body).toMatchObject({
      nodeId: "n1",
      hostname: "n1.lab",
      mgmtAddr: "10.0.0.11",
      mgmtInterface: "eth0",
      labels: { rack: "r1" },
      portRange: { first: 20000, last: 20999 },
      runningShards: [],
    });
    expect(s.token()).toBe("llmgw_node_1");
    expect(readFileSync(join(t.dir, "node-token"), "utf8")).toBe("llmgw_node_1\n");
    expect(statSync(join(t.dir, "node-token")).mode & 0o777).toBe(0o600);
    expect(s.intervals()).toEqual({ heartbeatIntervalS: 60, pollWaitS: 1 });
    expect(lines).toEqual([`registered as n1 with ${CP} (4 GPUs, 0 running shards)`]);
  });

  it("sends nothing while nothing changed within the heartbeat interval, a heartbeat when due", async () => {
    const s = await open();
    await s.sync(INV, [], []);
    clock += 59_999;
    expect(await s.sync(structuredClone(INV), [], [])).toBe("none");
    expect(cp.calls).toHaveLength(1);

    const shards = [{ shardId: "r1-s0", state: "ready" }];
    expect(await s.sync(INV, shards, [], { due: true })).toBe("heartbeat");
    const [hb] = cp.of("heartbeat");
    expect(hb!.auth).toBe("Bearer llmgw_node_1");
    expect(hb!.url.pathname).toBe("/api/v1/agents/n1/heartbeat");
    expect(hb!.body).toEqual(JSON.parse(JSON.stringify(heartbeatOf(INV, shards))));

    clock += 60_000; // the interval has passed since that heartbeat
    expect(await s.sync(INV, [], [])).toBe("heartbeat");
    expect(cp.of("heartbeat")).toHaveLength(2);
  });

  it("sends a heartbeat due within `withinMs`, and with a negative one only once that overdue", async () => {
    const s = await open();
    await s.sync(INV, [], []);
    clock += 53_999;
    expect(s.heartbeatDueInMs()).toBe(6_001);
    expect(await s.sync(INV, [], [], { withinMs: 6_000 })).toBe("none");
    clock += 1;
    expect(await s.sync(INV, [], [], { withinMs: 6_000 })).toBe("heartbeat");
    expect(s.heartbeatDueInMs()).toBe(60_000);

    clock += 60_000 + 44_999; // due, and overdue by less than 45 s
    expect(await s.sync(INV, [], [], { withinMs: -45_000 })).toBe("none");
    clock += 1;
    expect(await s.sync(INV, [], [], { withinMs: -45_000 })).toBe("heartbeat");
    expect(cp.of("heartbeat")).toHaveLength(2);
    // a fabric change goes at once, whatever the timing
    const moving = changed((i) => (i.gpus[0]!.fabric!.state = "In Progress"));
    expect(await s.sync(moving, [], [], { withinMs: -45_000 })).toBe("heartbeat");
  });

  it("sends the summary of the IMEX peer list with heartbeats, reading the file at most once a minute", async () => {
    const cfgPath = join(t.dir, "nodes_config.cfg");
    writeFileSync(cfgPath, "10.0.0.12\n10.0.0.11\n");
    const s = await openSession({
      cfg: parseAgentConfig(`state_dir: ${t.dir}\njoin_token: llmgw_join_j\nimex_nodes_config: ${cfgPath}\n`),
      id: ID,
      client: createClient({ server: CP }),
      log: (l) => lines.push(l),
      now: () => clock,
    });
    await s.sync(INV, [], []);
    await s.sync(INV, [], [], { due: true });
    const two = { digest: await imexConfigDigest(["10.0.0.11", "10.0.0.12"]), addresses: 2 };
    expect(cp.of("heartbeat")[0]!.body).toMatchObject({ imexConfig: two });
    writeFileSync(cfgPath, "10.0.0.11\n");
    clock += 30_000;
    await s.sync(INV, [], [], { due: true });
    expect(cp.of("heartbeat")[1]!.body).toMatchObject({ imexConfig: two });
    clock += 30_000;
    await s.sync(INV, [], [], { due: true });
    expect(cp.of("heartbeat")[2]!.body).toMatchObject({
      imexConfig: { digest: await imexConfigDigest(["10.0.0.11"]), addresses: 1 },
    });
  });

  it("sends a heartbeat at once when the fabric changed, not for memory or utilization", async () => {
    const s = await open();
    await s.sync(INV, [], []);
    expect(
      await s.sync(
        changed((i) => (i.gpus[0]!.memoryUsedMiB = 1000)),
        [],
        [],
      ),
    ).toBe("none");
    expect(
      await s.sync(
        changed((i) => (i.gpus[0]!.fabric!.state = "In Progress")),
        [],
        [],
      ),
    ).toBe("heartbeat");
  });

  it("registers again with its node token when the registration key changed", async () => {
    const s = await open();
    await s.sync(INV, [], []);
    const more = changed((i) => (i.engines.versions.sglang = "0.5.0"));
    expect(
      await s.sync(
        more,
        [],
        [{ shardId: "r1-s0", replicaId: "r1", rank: 0, state: "ready", fingerprint: "fp", pid: 9 }],
      ),
    ).toBe("registered");
    const regs = cp.of("register");
    expect(regs.map((r) => r.auth)).toEqual(["Bearer llmgw_join_j", "Bearer llmgw_node_1"]);
    expect(regs[1]!.body).toMatchObject({ runningShards: [{ shardId: "r1-s0", pid: 9 }] });
    expect(await s.sync(more, [], [])).toBe("none");
  });

  it("registers again when a heartbeat is answered 409 (the control plane does not know these GPUs)", async () => {
    const s = await open();
    await s.sync(INV, [], []);
    cp.next.heartbeat.push(() => problem(409, "conflict", "GPU set changed"));
    expect(await s.sync(INV, [], [], { due: true })).toBe("registered");
    expect(cp.calls.map((c) => c.kind)).toEqual(["register", "heartbeat", "register"]);
  });

  it("throws a heartbeat failure that registering would not fix, and tries again only after a back-off", async () => {
    const s = await open();
    await s.sync(INV, [], []);
    clock += 60_000;
    cp.next.heartbeat.push(() => problem(500, "internal"));
    const failed = await s.sync(INV, [], []).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(HeartbeatFailed);
    expect((failed as HeartbeatFailed).cause).toMatchObject({ status: 500 });
    const { retryInMs } = failed as HeartbeatFailed;
    expect(retryInMs).toBeGreaterThanOrEqual(500);
    expect(retryInMs).toBeLessThan(1000);
    expect(cp.of("register")).toHaveLength(1);
    // overdue, but not tried again before the back-off is over (the poll loop waits until then) ...
    expect(s.heartbeatDueInMs()).toBe(retryInMs);
    expect(await s.sync(INV, [], [])).toBe("none");
    expect(await s.sync(INV, [], [], { withinMs: 6_000 })).toBe("none");
    // ... nor for a fabric change; once it is over, the heartbeat goes
    expect(
      await s.sync(
        changed((i) => (i.gpus[0]!.fabric!.state = "In Progress")),
        [],
        [],
      ),
    ).toBe("none");
    clock += retryInMs;
    expect(await s.sync(INV, [], [])).toBe("heartbeat");
    expect(cp.of("heartbeat")).toHaveLength(2);
    expect(s.heartbeatDueInMs()).toBe(60_000);
  });

  it("joins again with the join token when the node token is refused at registration (the node was deleted)", async () => {
    const s = await open();
    await s.sync(INV, [], []);
    cp.next.register.push(() => problem(401, "unauthorized"));
    expect(await s.sync(INV, [], [], { force: true })).toBe("registered");
    expect(cp.of("register").map((r) => r.auth)).toEqual([
      "Bearer llmgw_join_j",
      "Bearer llmgw_node_1",
      "Bearer llmgw_join_j",
    ]);
    expect(s.token()).toBe("llmgw_node_2");
    expect(readFileSync(join(t.dir, "node-token"), "utf8")).toBe("llmgw_node_2\n");
    expect(lines).toContain("the node token was refused; registering again with the join token");
  });

  it("explains a node_exists refusal as a lost node token", async () => {
    const s = await open();
    cp.next.register.push(() => problem(409, "node_exists", "node n1 is registered with another token"));
    const e = await s.sync(INV, [], []).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(ApiCallError);
    expect((e as Error).message).toMatch(
      /node n1 is registered with another token — this agent has lost its node token \(state dir .*\)/,
    );
    expect((e as Error).message).toContain(t.dir);
    expect(needsRegistration(e)).toBe(false);
  });

  it("explains node_exists after a refused node token too", async () => {
    const s = await open();
    await s.sync(INV, [], []);
    cp.next.register.push(
      () => problem(401, "unauthorized"),
      () => problem(409, "node_exists", "taken"),
    );
    await expect(s.sync(INV, [], [], { force: true })).rejects.toThrow(/taken — this agent has lost its node token/);
  });

  it("cannot register without a node token or a join token", async () => {
    const s = await open(null);
    await expect(s.sync(INV, [], [])).rejects.toThrow(/no node token in the state dir and no join token configured/);
    expect(cp.calls).toEqual([]);
  });

  it("picks up where it left off: the saved token and registration key mean a heartbeat, unless forced", async () => {
    const first = await open();
    await first.sync(INV, [], []);
    const again = await open(null);
    expect(again.token()).toBe("llmgw_node_1");
    expect(await again.sync(INV, [], [])).toBe("heartbeat");
    expect(await again.sync(INV, [], [], { force: true })).toBe("registered");
    expect(cp.of("register").map((r) => r.auth)).toEqual(["Bearer llmgw_join_j", "Bearer llmgw_node_1"]);
  });

  it("registers at the next sync after invalidate()", async () => {
    const s = await open();
    await s.sync(INV, [], []);
    s.invalidate();
    expect(await s.sync(INV, [], [])).toBe("registered");
    expect(await s.sync(INV, [], [])).toBe("none");
  });

  it("takes its intervals from the registration", async () => {
    cp.registration = { heartbeatIntervalS: 5, pollWaitS: 20, nodeLostAfterS: 15 };
    const s = await open();
    await s.sync(INV, [], []);
    expect(s.intervals()).toEqual({ heartbeatIntervalS: 5, pollWaitS: 20 });
    clock += 5000;
    expect(await s.sync(INV, [], [])).toBe("heartbeat");
  });
});

describe("needsRegistration", () => {
  it.each([
    [new ApiCallError(401, "x", "unauthorized"), true],
    [new ApiCallError(404, "x", "not_found"), true],
    [new ApiCallError(409, "x", "conflict"), true],
    [new ApiCallError(409, "x", "node_exists"), false],
    [new ApiCallError(500, "x", "internal"), false],
    [new ApiCallError(0, "cannot reach"), false],
    [new Error("401"), false],
  ])("%s → %s", (e, want) => {
    expect(needsRegistration(e)).toBe(want);
  });
});
