// /docs in a real browser with every request to another origin blocked (an air-gapped cluster): the API reference is
// served by llmgw itself and shows the operations of /openapi.json.
import type { Browser } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { haveChromium, launchChromium, skipWithoutChromium } from "../helpers/browser.js";
import { tempDir } from "../helpers/db.js";
import { startServe, stop } from "../helpers/process.js";

const skip = skipWithoutChromium("docs-browser.test.ts");
const tmp = tempDir();
let server: Awaited<ReturnType<typeof startServe>> | undefined;
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
  if (server) await stop(server);
  tmp.cleanup();
});

describe.skipIf(skip)("/docs with no network", () => {
  it("renders the API reference from llmgw's own assets, asking no other origin for anything", async () => {
    expect(haveChromium).toBe(true);
    server = await startServe(["--db", `${tmp.dir}/llmgw.db`], {
      env: { LLMGW_ADMIN_TOKEN: "docs-browser-admin-token-000000000001" },
    });
    const origin = new URL(server.url).origin;
    browser = await launchChromium();
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
      elsewhere.push(url);
      return route.abort("internetdisconnected");
    });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${server.url}/docs`);
    // operations by their summaries, as the reference lists them: the first group open, the others on a click
    await expect
      .poll(() => page.getByText("Liveness: the process answers").first().isVisible(), { timeout: 20_000 })
      .toBe(true);
    await page.getByRole("button", { name: "Open Group - deployments" }).first().click();
    await expect
      .poll(() => page.getByText("Create or replace a deployment: N replicas of a model in a pool").first().isVisible())
      .toBe(true);
    expect(await page.getByText("Generate MCP").count()).toBe(0);
    expect(await page.title()).toBe("llmgw API");
    expect(errors).toEqual([]);
    expect(elsewhere).toEqual([]);
  });
});
