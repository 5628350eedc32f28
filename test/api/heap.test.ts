import { join } from "node:path";
import v8 from "node:v8";
import { afterEach, expect, it, vi } from "vitest";
import { loadServerConfig, ServerConfig } from "../../api/config.js";
import { heapGrowthFlag } from "../../api/heap.js";
import { startServer } from "../../api/node.js";
import { silentLog } from "../helpers/app.js";
import { tempDir } from "../helpers/db.js";

const tmp = tempDir();
afterEach(() => {
  vi.restoreAllMocks();
});

it("bounds the heap's growth at 30 % by default, LLMGW_HEAP_GROWTH_PERCENT sets it, 0 leaves it to V8", () => {
  expect(loadServerConfig({})).toMatchObject({ ok: true, config: { heapGrowthPercent: 30 } });
  expect(loadServerConfig({ LLMGW_HEAP_GROWTH_PERCENT: "0" })).toMatchObject({ config: { heapGrowthPercent: 0 } });
  const bad = loadServerConfig({ LLMGW_HEAP_GROWTH_PERCENT: "a lot" });
  expect(bad.ok).toBe(false);
  if (!bad.ok) expect(bad.errors.join("\n")).toMatch(/^LLMGW_HEAP_GROWTH_PERCENT: .*"a lot"/m);
  expect(heapGrowthFlag(30, [])).toBe("--heap-growing-percent=30");
  expect(heapGrowthFlag(0, ["--enable-source-maps"])).toBe("--heap-growing-percent=0");
});

it("leaves a growth given to node itself as it is", () => {
  expect(heapGrowthFlag(30, ["--heap-growing-percent=50"])).toBeUndefined();
  expect(heapGrowthFlag(30, ["--heap_growing_percent", "50"])).toBeUndefined();
  // another flag that starts alike is not that one
  expect(heapGrowthFlag(30, ["--heap-growing-percentile=5"])).toBe("--heap-growing-percent=30");
});

it("serve applies its growth bound to its own heap as it starts", async () => {
  const set = vi.spyOn(v8, "setFlagsFromString").mockImplementation(() => {});
  const config = ServerConfig.parse({ dbUrl: `file:${join(tmp.dir, "heap.sqlite")}`, port: 0, heapGrowthPercent: 25 });
  const running = await startServer(config, silentLog, () => {});
  await running.close();
  expect(set).toHaveBeenCalledWith("--heap-growing-percent=25");
});
