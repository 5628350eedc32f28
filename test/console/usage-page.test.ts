// /admin/usage renders the numbers of stored recent usage rows, per model and per key, for the hour and the day.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageRecent } from "../../api/db/schema.js";
import { BUCKET_MS, HOUR_MS } from "../../shared/schemas/usage.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { get, login } from "./console.js";

let t: TestApp;
let cookie: string;
const NOW = Date.UTC(2026, 10, 30, 12, 7);
const B = Date.UTC(2026, 10, 30, 12, 5);
const zeros = { ttft0: 0, ttft1: 0, ttft2: 0, ttft3: 0, ttft4: 0, ttft5: 0, ttft6: 0, ttft7: 0, ttft8: 0, ttft9: 0 };

beforeAll(async () => {
  t = await createTestApp();
  t.clock.set(NOW);
  cookie = (await login(t)).cookie;
});
afterAll(() => t.close());

const html = async (path: string) => {
  const r = await get(t, path, cookie);
  expect(r.status, path).toBe(200);
  return r.text;
};

describe("/admin/usage", () => {
  it("says there is nothing yet, and is in the nav", async () => {
    const page = await html("/admin/usage");
    expect(page).toContain('<a href="/admin/usage" aria-current="page">Usage</a>');
    expect(page).toContain("No requests counted in this window.");
    expect(page).toContain('<a href="/admin/usage?window=hour" aria-current="page">Last hour</a>');
  });

  it("shows per model and per key the requests, errors, tokens and p50/p95 of the stored rows", async () => {
    await t.store.write((tx) =>
      tx.insert(usageRecent).values([
        // 30 within 50 ms, 12 in (1 s, 2.5 s]
        {
          keyName: "team-a",
          model: "llama",
          bucketStart: B,
          requests: 42,
          errors: 3,
          promptTokens: 4200,
          completionTokens: 840,
          ...zeros,
          ttft0: 30,
          ttft5: 12,
        },
        {
          keyName: "team-b",
          model: "llama",
          bucketStart: B - BUCKET_MS,
          requests: 8,
          errors: 0,
          promptTokens: 800,
          completionTokens: 160,
          ...zeros,
          ttft0: 8,
        },
        // two hours ago: in the day, not in the hour
        {
          keyName: "team-b",
          model: "qwen",
          bucketStart: B - 2 * HOUR_MS,
          requests: 7,
          errors: 7,
          promptTokens: 0,
          completionTokens: 0,
          ...zeros,
        },
      ]),
    );
    const hour = await html("/admin/usage");
    const totals = (p: string, name: string) => {
      const at = p.indexOf(`<th scope="row" class="mono">${name}</th>`);
      const tr = p.slice(at, p.indexOf("</tr>", at));
      return [...tr.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1]);
    };
    // 50 requests, 3 errors; p50 the 25th of 38 within 50 ms (33 ms), p95 the 9.5th of 12 in (1 s, 2.5 s] (2.2 s)
    expect(totals(hour, "llama")).toEqual(["50", "3", "6.0 %", "5,000", "1,000", "33 ms", "2.2 s"]);
    expect(totals(hour, "team-a")).toEqual(["42", "3", "7.1 %", "4,200", "840", "35 ms", "2.2 s"]);
    expect(hour).not.toContain(">qwen<");
    expect(hour).toContain('<title id="m-0-req-title">Requests and errors, model llama, last hour</title>');
    expect(hour).toContain('<th scope="row">12:05</th><td class="num">42</td><td class="num">3</td>');
    expect(hour).toContain(">11:10</text>"); // the first of 12 steps, on the time axis

    const day = await html("/admin/usage?window=day");
    expect(day).toContain('<a href="/admin/usage?window=day" aria-current="page">Last day</a>');
    expect(totals(day, "qwen")).toEqual(["7", "7", "100.0 %", "0", "0", "—", "—"]);
    // the model's hour from 12:00 sums its 5-minute buckets at 12:00 and 12:05
    expect(day).toContain('<th scope="row">12:00</th><td class="num">50</td><td class="num">3</td>');
    expect(day).toContain('<th scope="row">10:00</th><td class="num">7</td><td class="num">7</td>');
  });

  it("needs a session", async () => {
    const r = await get(t, "/admin/usage");
    expect(r.status).toBe(303);
  });
});
