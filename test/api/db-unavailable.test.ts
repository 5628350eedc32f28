// The API when its database fails: unreachable (a libSQL server on a closed port) or full (SQLITE_FULL). Requests
// get 503 `unavailable` naming the cause, not 500 `internal`, and /readyz says why the instance is not ready.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.js";
import { expectedMigrations } from "../../api/db/journal.js";
import { openDb } from "../../api/db/open.js";
import type { Log } from "../../api/log.js";
import { createRowPoller } from "../../api/poll-hub.js";
import { createTestApp, defaultSettings, silentLog, type TestApp } from "../helpers/app.js";
import { refusingPort } from "../helpers/refusing-port.js";

/** A log that keeps its lines. */
function keptLog() {
  const lines: { level: string; msg: string; extra?: object }[] = [];
  const at =
    (level: string) =>
    (msg: string, extra?: object): void =>
      void lines.push({ level, msg, extra });
  const log: Log = { info: at("info"), warn: at("warn"), error: at("error") };
  return { log, lines };
}

describe("a libSQL server that refuses connections", () => {
  let port: number;
  let close: () => void;
  const kept = keptLog();
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    port = await refusingPort();
    const { client, store } = await openDb(`http://127.0.0.1:${port}`);
    close = () => client.close();
    app = createApp({
      store,
      now: Date.now,
      log: kept.log,
      settings: defaultSettings(),
      waiter: createRowPoller(store),
      background: () => undefined,
      migrations: expectedMigrations,
    });
  });
  afterAll(() => close());

  it("/readyz answers 503 problem+json naming the refused connection", async () => {
    const r = await app.request("/readyz");
    expect(r.status).toBe(503);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    const body = await r.json();
    expect(body.code).toBe("unavailable");
    expect(body.detail).toBe(`database unreachable: connection refused (connect ECONNREFUSED 127.0.0.1:${port})`);
  });

  it("an API request answers 503 unavailable with the cause and Retry-After, logged in one line without a stack", async () => {
    const r = await app.request("/api/v1/nodes", { headers: { authorization: "Bearer llmgw_adm_whatever-it-is" } });
    expect(r.status).toBe(503);
    const body = await r.json();
    expect(body).toMatchObject({ status: 503, code: "unavailable", title: "Service unavailable" });
    expect(body.detail).toBe(`database unavailable: connection refused (connect ECONNREFUSED 127.0.0.1:${port})`);
    expect(r.headers.get("retry-after")).toBe("5");
    const line = kept.lines.find((l) => l.msg === "database unavailable");
    expect(line).toMatchObject({ level: "warn", extra: { kind: "refused", requestId: body.requestId } });
    expect(kept.lines.some((l) => l.msg === "unhandled error")).toBe(false);
  });
});

describe("a full database (SQLITE_FULL)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ log: silentLog });
  });
  afterAll(() => t.close());

  it("a write answers 503 with the cause; /readyz is 503 while writes are refused", async () => {
    expect((await t.call("GET", "/readyz")).status).toBe(200);
    // the file may not grow past the pages it has: the next write that needs a page fails as on a full disk
    const [pages] = await t.db.all<{ page_count: number }>(sql`PRAGMA page_count`);
    await t.db.run(sql.raw(`PRAGMA max_page_count = ${pages!.page_count}`));
    const spec = {
      weightsPath: `/${"w".repeat(1000)}`,
      profiles: [{ name: "p", engine: "vllm", gpuClass: "l40s-45g" }],
    };
    let w = await t.admin("PUT", "/api/v1/models/m0", { body: { spec } });
    for (let i = 1; w.status === 201 && i < 200; i++)
      w = await t.admin("PUT", `/api/v1/models/m${i}`, { body: { spec } });
    expect(w.status).toBe(503);
    expect(w.json).toMatchObject({ code: "unavailable" });
    expect(w.json.detail).toBe("database unavailable: database or disk is full (SQLITE_FULL)");

    const ready = await t.call("GET", "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.json.code).toBe("unavailable");
    expect(ready.json.detail).toMatch(/^database refuses writes: database or disk is full \(SQLITE_FULL\) \(last at /);
  });
});
