// A deployment's replica counts come from one SQL aggregate (api/views/replica-counts.ts) that restates the rule of
// replicaState() (api/placement/serving.ts): here both judge every mix of shard states and transport verdicts, one-
// and two-shard replicas, and must agree.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../api/db/client.js";
import { upsertNode } from "../../api/db/nodes.js";
import { openDb } from "../../api/db/open.js";
import { replicas, shardStatus, shards } from "../../api/db/schema.js";
import { applyMigrations } from "../../api/node.js";
import { replicaState, type ShardFacts } from "../../api/placement/serving.js";
import { replicaCounts } from "../../api/views/replica-counts.js";
import type { TransportVerdict } from "../../shared/schemas/transport.js";
import { tempDbUrl } from "../helpers/db.js";
import { registerBody } from "../helpers/inventory.js";

const tmp = tempDbUrl();
let store: Store;
let close: () => void;

// a shard with no status row, and every reported state with every verdict (or none said)
const STATES = ["ready", "failed", "starting", "loading"] as const;
const VERDICTS: (TransportVerdict | null)[] = [null, "pending", "ok", "degraded", "unverified", "local"];
const FACTS: ShardFacts[] = [
  { state: null },
  ...STATES.flatMap((state) =>
    VERDICTS.map((v) => ({ state, transport: v ? { verdict: v, expected: "ib:fabric-a (mlx5_0)" } : null })),
  ),
];
// each fact alone (deployment "one"), every ordered pair (deployment "two"), and a replica with no shard row
const REPLICAS: { deployment: string; shards: ShardFacts[] }[] = [
  ...FACTS.map((f) => ({ deployment: "one", shards: [f] })),
  ...FACTS.flatMap((a) => FACTS.map((b) => ({ deployment: "two", shards: [a, b] }))),
  { deployment: "bare", shards: [] },
];

beforeAll(async () => {
  const opened = await openDb(tmp.url);
  store = opened.store;
  close = () => opened.client.close();
  await applyMigrations(opened.db);
  await store.write(async (tx) => {
    await upsertNode(tx, registerBody("n1") as never, "hash", 1);
    for (const [i, r] of REPLICAS.entries()) {
      const id = `r${i}`;
      await tx
        .insert(replicas)
        .values({ id, deployment: r.deployment, profile: "p", fingerprint: "f", seq: i, createdAt: 1 });
      for (const [rank, s] of r.shards.entries()) {
        const shardId = `${id}-${rank}`;
        await tx.insert(shards).values({ id: shardId, replicaId: id, nodeId: "n1", rank, spec: "{}" });
        if (s.state)
          await tx.insert(shardStatus).values({
            nodeId: "n1",
            shardId,
            replicaId: id,
            state: s.state as "ready",
            updatedAt: 1,
            transport: s.transport ?? null,
          });
      }
    }
  });
});
afterAll(() => {
  close();
  tmp.cleanup();
});

describe("replicaCounts", () => {
  it("counts as replicaState() judges, for every mix of shard facts", async () => {
    const counts = await replicaCounts(store.db, ["one", "two", "bare", "absent"]);
    for (const name of ["one", "two"]) {
      const states = REPLICAS.filter((r) => r.deployment === name).map((r) => replicaState(r.shards));
      expect(counts.get(name)).toEqual({
        placed: states.length,
        ready: states.filter((s) => s === "ready").length,
        degraded: states.filter((s) => s === "degraded").length,
      });
    }
    // the rule has cases on both sides in each deployment
    expect(counts.get("two")?.ready).toBeGreaterThan(0);
    expect(counts.get("two")?.degraded).toBeGreaterThan(0);
    // a replica is placed when it has a shard; a deployment with none placed is absent
    expect(counts.has("bare")).toBe(false);
    expect(counts.has("absent")).toBe(false);
  });

  it("counts only the deployments asked for", async () => {
    const counts = await replicaCounts(store.db, ["one"]);
    expect([...counts.keys()]).toEqual(["one"]);
    expect(await replicaCounts(store.db, [])).toEqual(new Map());
  });
});
