import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeUsage } from "../../api/router/usage.js";
import { HOUR_MS } from "../../shared/schemas/usage.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { registerBody } from "../helpers/inventory.js";

let t: TestApp;
const H = Date.UTC(2026, 10, 30, 12);
beforeAll(async () => {
  t = await createTestApp();
  const row = (
    keyName: string,
    model: string,
    hours: number,
    requests: number,
    promptTokens: number,
    completionTokens: number,
  ) => ({ keyName, model, hourStart: H + hours * HOUR_MS, requests, promptTokens, completionTokens });
  await writeUsage(t.store, [
    row("team-a", "llama", 0, 10, 1000, 100),
    row("team-a", "qwen", 0, 1, 10, 1),
    row("team-b", "llama", 1, 5, 500, 50),
    row("team-a", "llama", 2, 2, 20, 2),
  ]);
});
afterAll(() => t.close());

const get = async (query = "") =>
  (await t.admin("GET", `/api/v1/usage${query}`)).json as {
    items: { key: string; model: string; hourStart: number }[];
    totals: object;
  };

describe("GET /api/v1/usage", () => {
  it("lists every row by hour, key and model, with totals", async () => {
    const r = await get();
    expect(r.items).toEqual([
      { key: "team-a", model: "llama", hourStart: H, requests: 10, promptTokens: 1000, completionTokens: 100 },
      { key: "team-a", model: "qwen", hourStart: H, requests: 1, promptTokens: 10, completionTokens: 1 },
      { key: "team-b", model: "llama", hourStart: H + HOUR_MS, requests: 5, promptTokens: 500, completionTokens: 50 },
      { key: "team-a", model: "llama", hourStart: H + 2 * HOUR_MS, requests: 2, promptTokens: 20, completionTokens: 2 },
    ]);
    expect(r.totals).toEqual({ requests: 18, promptTokens: 1530, completionTokens: 153 });
  });

  it.each([
    ["?key=team-a", 3, { requests: 13, promptTokens: 1030, completionTokens: 103 }],
    ["?model=llama", 3, { requests: 17, promptTokens: 1520, completionTokens: 152 }],
    ["?key=team-a&model=llama", 2, { requests: 12, promptTokens: 1020, completionTokens: 102 }],
    [`?since=${H + HOUR_MS}`, 2, { requests: 7, promptTokens: 520, completionTokens: 52 }],
    [`?since=${H + HOUR_MS + 1}`, 2, { requests: 7, promptTokens: 520, completionTokens: 52 }], // rounded down to its hour
    [`?until=${H + HOUR_MS}`, 2, { requests: 11, promptTokens: 1010, completionTokens: 101 }],
    [`?since=${H}&until=${H + 2 * HOUR_MS}&key=team-b`, 1, { requests: 5, promptTokens: 500, completionTokens: 50 }],
    ["?key=nobody", 0, { requests: 0, promptTokens: 0, completionTokens: 0 }],
  ])("filters %s", async (query, n, totals) => {
    const r = await get(query);
    expect(r.items).toHaveLength(n);
    expect(r.totals).toEqual(totals);
  });

  it("refuses bad filters with 400 naming them", async () => {
    const r = await t.admin("GET", "/api/v1/usage?since=yesterday&until=-1");
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["query.since", "query.until"]);
  });

  it("is for admins only", async () => {
    expect((await t.call("GET", "/api/v1/usage")).status).toBe(401);
    const join = (await t.admin("POST", "/api/v1/join-tokens", { body: {} })).json.token;
    const node = (await t.call("POST", "/api/v1/agents/register", { token: join, body: registerBody("u1") })).json
      .nodeToken;
    expect((await t.call("GET", "/api/v1/usage", { token: node })).status).toBe(403);
  });
});
