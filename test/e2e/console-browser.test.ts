// The console in a real browser (playwright-core driving Debian's chromium) against a real `llmgw serve` with a
// registered GB200 domain: log in, read the rack of /admin/nvlink by accessible names, watch it refresh in place,
// open a node page, cordon the node with its button. Screenshots go to test-output/; with LLMGW_UPDATE_DOCS=1 the
// full-rack picture is also written to docs/console-nvlink.png.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegisterRequestInput } from "../../shared/schemas/agent.js";
import { DEGRADED_TRAY, fleet, gb200Tray, NVL_MODEL, OUT_TRAY, TRAYS } from "../console/cluster.js";
import { CHROMIUM, haveChromium, launchChromium, skipWithoutChromium } from "../helpers/browser.js";
import { tempDir } from "../helpers/db.js";
import { registerBody } from "../helpers/inventory.js";
import { ROOT, startServe, stop } from "../helpers/process.js";

const skip = skipWithoutChromium("console-browser.test.ts");

const OUT = join(ROOT, "test-output");
const TOKEN = "console-browser-admin-token-0000000001";
const DOMAIN = "00000001-0000-0000-0000-000000000001.2";
const tmp = tempDir();

let server: Awaited<ReturnType<typeof startServe>> | undefined;
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
  if (server) await stop(server);
  tmp.cleanup();
});

/** Calls the API with the admin token; throws on an unexpected status. */
async function api(method: string, path: string, body?: unknown, token = TOKEN) {
  const res = await fetch(`${server!.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

async function register(bodies: RegisterRequestInput[]) {
  const join = (await api("POST", "/api/v1/join-tokens", {})) as { token: string };
  for (const body of bodies) await api("POST", "/api/v1/agents/register", body, join.token);
}

/** Every GPU chip of a tray as [data-state, accessible name]. */
async function chips(page: Page, node: string) {
  const list = page.getByRole("listitem", { name: new RegExp(`^Tray \\d+ \\(${node}\\): `) }).getByRole("img");
  const out: [string | null, string | null][] = [];
  for (const chip of await list.all())
    out.push([await chip.getAttribute("data-state"), await chip.getAttribute("aria-label")]);
  return out;
}

describe.skipIf(skip)(
  "the console in chromium",
  () => {
    let page: Page;
    const errors: string[] = [];

    beforeAll(async () => {
      expect(haveChromium, `${CHROMIUM} is not installed (apt-get install -y chromium)`).toBe(true);
      mkdirSync(OUT, { recursive: true });
      server = await startServe(["--db", join(tmp.dir, "llmgw.db")], { env: { LLMGW_ADMIN_TOKEN: TOKEN } });
      await register(fleet());
      await api("PUT", "/api/v1/models/llama-405b", { spec: NVL_MODEL });
      await api("PUT", "/api/v1/deployments/big", { spec: { model: "llama-405b", replicas: 2, pool: "prod" } });
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      await page.clock.install();
    }, 60_000);

    it("sends an unauthenticated browser to the login page and back after logging in", async () => {
      await page.goto(`${server!.url}/admin/nvlink`);
      expect(new URL(page.url()).pathname).toBe("/admin/login");
      await page.getByLabel("Admin token").fill("llmgw_adm_notthetokennotthetokennotthetokennott");
      await page.getByRole("button", { name: "Log in" }).click();
      await expect.poll(() => page.getByRole("alert").textContent()).toContain("not a valid admin token");
      errors.length = 0; // the refused login's 401, logged by the browser
      await page.getByLabel("Admin token").fill(TOKEN);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.waitForURL(/\/admin\/nvlink$/);
      const cookie = (await page.context().cookies()).find((c) => c.name === "llmgw_console")!;
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/admin" });
      expect(cookie.value).not.toContain(TOKEN);
    });

    it("draws the domain as a rack whose trays and GPUs say their state", async () => {
      const rack = page.getByRole("group", { name: `Rack of NVLink domain ${DOMAIN}` });
      await expect.poll(() => rack.isVisible()).toBe(true);
      const trays = rack.getByRole("listitem", { name: /^Tray \d+ / });
      const names = await Promise.all((await trays.all()).map((t) => t.getAttribute("aria-label")));
      expect(names).toEqual([
        `Tray 1 (${TRAYS[0]}): in`,
        `Tray 2 (${TRAYS[1]}): in`,
        `Tray 3 (${OUT_TRAY}): out`,
        `Tray 4 (${DEGRADED_TRAY}): degraded`,
      ]);
      expect(await chips(page, TRAYS[0])).toEqual([0, 1, 2, 3].map((i) => ["joined", `GPU ${i}: joined`]));
      expect(await chips(page, OUT_TRAY)).toEqual([
        ["joined", "GPU 0: joined"],
        ["joined", "GPU 1: joined"],
        ["out", "GPU 2: not joined (fabric In Progress)"],
        ["joined", "GPU 3: joined"],
      ]);
      expect((await chips(page, DEGRADED_TRAY))[1]).toEqual([
        "degraded",
        "GPU 1: joined, degraded bandwidth (fabric health Limited Capacity, bandwidth Degraded)",
      ]);
      const why = page.getByRole("list", { name: `What keeps ${OUT_TRAY} out` });
      expect(await why.getByRole("listitem").allTextContents()).toEqual(["GPU 2 fabric In Progress", "IMEX down"]);
      await rack.screenshot({ path: join(OUT, "console-nvlink.png") });
    });

    it("animates the states, and keeps still for prefers-reduced-motion", async () => {
      const out = page.getByRole("img", { name: "GPU 2: not joined (fabric In Progress)" });
      const animation = () => out.evaluate((el) => getComputedStyle(el).animationName);
      const light = () =>
        page
          .locator(".backplane .light")
          .first()
          .evaluate((el) => getComputedStyle(el).animationName);
      expect(await animation()).toBe("pulse");
      expect(await light()).toBe("flow");
      await page.emulateMedia({ reducedMotion: "reduce" });
      expect(await animation()).toBe("none");
      expect(await light()).toBe("none");
      await page.emulateMedia({ reducedMotion: "no-preference" });
    });

    it("refreshes in place: a tray cordoned elsewhere shows out, and the scroll position stays", async () => {
      await page.setViewportSize({ width: 1400, height: 500 });
      await page.evaluate(() => window.scrollTo(0, 180));
      await api("POST", `/api/v1/nodes/${TRAYS[1]}/cordon`);
      await page.clock.runFor(10_000);
      const tray = page.getByRole("listitem", { name: `Tray 2 (${TRAYS[1]}): out` });
      await expect.poll(() => tray.count()).toBe(1);
      expect(await page.getByRole("list", { name: `What keeps ${TRAYS[1]} out` }).textContent()).toBe("node cordoned");
      expect(await page.evaluate(() => window.scrollY)).toBe(180);
      await api("POST", `/api/v1/nodes/${TRAYS[1]}/uncordon`);
      await page.setViewportSize({ width: 1400, height: 1000 });
    });

    it("opens a node page from the rack and cordons the node with its button", async () => {
      await page
        .getByRole("group", { name: `Rack of NVLink domain ${DOMAIN}` })
        .getByRole("link", { name: TRAYS[0], exact: true })
        .click();
      await page.waitForURL(new RegExp(`/admin/nodes/${TRAYS[0]}$`));
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(`${TRAYS[0]} ready`);
      expect(await page.getByRole("cell", { name: "GPU 0 to GPU 3: 18 NVLinks" }).textContent()).toBe("NV18");
      expect(await page.getByRole("rowheader", { name: /^GPU 2/ }).count()).toBe(1);
      await page.getByRole("button", { name: "Cordon", exact: true }).click();
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(`Cordon ${TRAYS[0]}?`);
      expect(((await api("GET", `/api/v1/nodes/${TRAYS[0]}`)) as { adminState: string }).adminState).toBe("ready");
      await page.getByRole("button", { name: `Cordon ${TRAYS[0]}`, exact: true }).click();
      await page.waitForURL(/\?done=cordon$/);
      expect(await page.getByRole("status").textContent()).toBe(`${TRAYS[0]} cordoned: no new placements.`);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(`${TRAYS[0]} cordoned`);
      expect(await page.getByRole("button", { name: "Cordon", exact: true }).isDisabled()).toBe(true);
      expect(((await api("GET", `/api/v1/nodes/${TRAYS[0]}`)) as { adminState: string }).adminState).toBe("cordoned");
      await page.screenshot({ path: join(OUT, "console-node.png"), fullPage: true });
      await page.getByRole("button", { name: "Uncordon", exact: true }).click();
      await page.waitForURL(/\?done=uncordon$/);
      expect(((await api("GET", `/api/v1/nodes/${TRAYS[0]}`)) as { adminState: string }).adminState).toBe("ready");
    });

    it("fits a 390-pixel phone: tables scroll inside themselves, never the page", async () => {
      const phone = page;
      await phone.setViewportSize({ width: 390, height: 844 });
      for (const path of ["/admin", "/admin/nodes", "/admin/deployments", `/admin/nodes/${OUT_TRAY}`]) {
        await phone.goto(`${server!.url}${path}`);
        expect(new URL(phone.url()).pathname, path).toBe(path);
        expect(await phone.evaluate(() => document.scrollingElement!.scrollWidth), path).toBeLessThanOrEqual(390);
      }
      await phone.goto(`${server!.url}/admin`);
      const items = phone.getByRole("list", { name: "What is wrong now" }).getByRole("listitem");
      expect(await items.first().textContent()).toContain(`Tray 3 (${OUT_TRAY}) is out of NVLink domain`);
      await phone.screenshot({ path: join(OUT, "console-overview-390.png"), fullPage: true });
      if (process.env.LLMGW_UPDATE_DOCS)
        await phone.screenshot({ path: join(ROOT, "docs", "console-overview-390.png"), fullPage: true });
      await page.setViewportSize({ width: 1400, height: 1000 });
    });

    it("stays readable with a full rack of 18 trays × 4 GPUs", async () => {
      await register(
        Array.from({ length: 14 }, (_, i) => registerBody(`gb-tray-${i + 5}`, gb200Tray(`gb-tray-${i + 5}`, i + 5))),
      );
      await page.goto(`${server!.url}/admin/nvlink`);
      const rack = page.getByRole("group", { name: `Rack of NVLink domain ${DOMAIN}` });
      expect(await rack.getByRole("listitem", { name: /^Tray \d+ / }).count()).toBe(18);
      expect(await rack.getByRole("img").count()).toBe(72);
      const boxes = await rack
        .locator(".tray")
        .evaluateAll((els) =>
          els.map((e) => e.getBoundingClientRect()).map((r) => ({ top: r.top, bottom: r.bottom, right: r.right })),
        );
      for (let i = 1; i < boxes.length; i++) expect(boxes[i]!.top).toBeGreaterThanOrEqual(boxes[i - 1]!.bottom);
      expect(Math.max(...boxes.map((b) => b.right))).toBeLessThanOrEqual(1400);
      const chip = await rack
        .getByRole("img")
        .first()
        .evaluate((el) => ({ w: el.getBoundingClientRect().width, font: parseFloat(getComputedStyle(el).fontSize) }));
      expect(chip.w).toBeGreaterThanOrEqual(32);
      expect(chip.font).toBeGreaterThanOrEqual(11);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await page.emulateMedia({ reducedMotion: "reduce" });
      const domain = page.getByRole("region", { name: /^Domain / });
      await domain.screenshot({ path: join(OUT, "console-nvlink-18.png") });
      if (process.env.LLMGW_UPDATE_DOCS) await domain.screenshot({ path: join(ROOT, "docs", "console-nvlink.png") });
      await page.emulateMedia({ reducedMotion: "no-preference" });
    });

    it("logs out, and the pages need a login again", async () => {
      await page.getByRole("button", { name: "Log out" }).click();
      await page.waitForURL(/\/admin\/login$/);
      await page.goto(`${server!.url}/admin`);
      expect(new URL(page.url()).pathname).toBe("/admin/login");
      expect(errors).toEqual([]);
    });
  },
  60_000,
);
