// /admin/usage in a real browser (playwright-core driving Debian's chromium) over real traffic: requests from two API
// keys through the router to mock engines (streamed and not, and some refused for a model with no ready replica),
// flushed to the database, then read as charts by accessible name. Screenshots go to test-output/; with
// LLMGW_UPDATE_DOCS=1 the hour view is also written to docs/console-usage.png.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRecentUsage } from "../../api/db/usage-recent.js";
import { haveChromium, launchChromium, skipWithoutChromium } from "../helpers/browser.js";
import { killAll, ROOT, until } from "../helpers/process.js";
import { type Stack, startStack } from "../helpers/router.js";
import { post } from "../helpers/router-cases.js";

const skip = skipWithoutChromium("console-usage-browser.test.ts");
const OUT = join(ROOT, "test-output");

let s: Stack;
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
  await killAll();
  await s?.close();
});

describe.skipIf(skip)(
  "/admin/usage in chromium",
  () => {
    let page: Page;
    const errors: string[] = [];

    beforeAll(async () => {
      expect(haveChromium).toBe(true);
      mkdirSync(OUT, { recursive: true });
      s = await startStack();
      const search = await s.key("team-search");
      const batch = await s.key("team-batch");
      await s.replicas("chat", 1, () => ["--tokens-per-s", "400"]);
      await s.api("PUT", "/api/v1/models/ghost", {
        spec: { weightsPath: "/m/ghost", profiles: [{ name: "big", engine: "vllm", gpuClass: "b300-288g" }] },
      });
      await s.api("PUT", "/api/v1/deployments/ghost", { spec: { model: "ghost", replicas: 1 } });
      await until(async () => (await s.routing.router.table.get()).declared.has("ghost"), 5000, "ghost declared");
      const chat = (stream: boolean, n: number) => ({
        model: "chat",
        messages: [{ role: "user", content: "hello" }],
        max_tokens: n,
        stream,
      });
      for (let i = 0; i < 6; i++) {
        const r = await post(s.url, "/v1/chat/completions", chat(i % 2 === 0, 4 + i), search);
        expect(r.status).toBe(200);
        await r.text();
      }
      for (let i = 0; i < 3; i++) await (await post(s.url, "/v1/chat/completions", chat(true, 20), batch)).text();
      for (let i = 0; i < 2; i++) {
        const r = await post(s.url, "/v1/chat/completions", { ...chat(false, 1), model: "ghost" }, batch);
        expect(r.status).toBe(503);
        await r.text();
      }
      await s.routing.router.usage.flush();
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
    }, 60_000);

    it("the router stored what it served: requests, errors and first-token times per key and model", async () => {
      const rows = await readRecentUsage(s.store.db, 0);
      const by = (k: string, m: string) => rows.filter((r) => r.keyName === k && r.model === m);
      const sum = (rs: typeof rows, f: (r: (typeof rows)[number]) => number) => rs.reduce((n, r) => n + f(r), 0);
      const search = by("team-search", "chat");
      expect(sum(search, (r) => r.requests)).toBe(6);
      expect(sum(search, (r) => r.errors)).toBe(0);
      expect(sum(search, (r) => r.completionTokens)).toBeGreaterThan(0);
      // every served request has a first-token time in the histogram
      const ttft = (r: (typeof rows)[number]) =>
        r.ttft0 + r.ttft1 + r.ttft2 + r.ttft3 + r.ttft4 + r.ttft5 + r.ttft6 + r.ttft7 + r.ttft8 + r.ttft9;
      expect(sum(search, ttft)).toBe(6);
      const ghost = by("team-batch", "ghost");
      expect([sum(ghost, (r) => r.requests), sum(ghost, (r) => r.errors), sum(ghost, ttft)]).toEqual([2, 2, 0]);
    });

    it("shows the hour per model and per key as charts with their numbers", async () => {
      await page.goto(`${s.url}/admin/usage`);
      await page.getByLabel("Admin token").fill(s.admin);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.waitForURL(/\/admin\/usage$/);
      expect(await page.getByRole("link", { name: "Usage" }).getAttribute("aria-current")).toBe("page");
      const models = page.getByRole("table", { name: "Last hour per model" });
      expect(await models.getByRole("row").nth(1).getByRole("cell").first().textContent()).toBe("9");
      const ghostRow = models.getByRole("row", { name: /ghost/ });
      expect(await ghostRow.getByRole("cell").allTextContents()).toEqual(["2", "2", "100.0 %", "0", "0", "—", "—"]);
      const keys = page.getByRole("table", { name: "Last hour per key" });
      expect(
        await keys
          .getByRole("row", { name: /team-search/ })
          .getByRole("cell")
          .nth(0)
          .textContent(),
      ).toBe("6");
      for (const name of [
        "Requests and errors, model chat, last hour",
        "Tokens in and out, model chat, last hour",
        "Time to first token, model chat, last hour",
        "Time to first token, key team-search, last hour",
      ])
        expect(await page.getByRole("img", { name: new RegExp(`^${name}`) }).count(), name).toBe(1);
      const chat = page.getByRole("article", { name: "model chat" });
      await chat.screenshot({ path: join(OUT, "console-usage-model.png") });
      await page.screenshot({ path: join(OUT, "console-usage.png"), fullPage: true });
      if (process.env.LLMGW_UPDATE_DOCS) await chat.screenshot({ path: join(ROOT, "docs", "console-usage.png") });
      expect(errors).toEqual([]);
    });

    it("switches to the day in hourly steps", async () => {
      await page.getByRole("link", { name: "Last day" }).click();
      await page.waitForURL(/window=day$/);
      expect(await page.getByRole("table", { name: "Last day per model" }).isVisible()).toBe(true);
      expect(await page.getByRole("img", { name: /^Requests and errors, model chat, last day/ }).count()).toBe(1);
      await page.screenshot({ path: join(OUT, "console-usage-day.png"), fullPage: true });
      expect(errors).toEqual([]);
    });
  },
  120_000,
);
