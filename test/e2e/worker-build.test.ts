import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { ROOT } from "../helpers/process.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("the Cloudflare Worker entry", () => {
  it("builds with `wrangler deploy --dry-run` into a bundle with no node: imports", async () => {
    const r = await promisify(execFile)(join(ROOT, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", tmp.dir], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
    });
    expect(r.stdout).toContain("--dry-run: exiting now.");
    const bundle = readFileSync(join(tmp.dir, "worker.js"), "utf8");
    expect(bundle).not.toMatch(/from\s*["']node:|require\(["']node:/);
    expect(bundle).toContain("registerNode");
    expect(bundle).toContain("scheduled");
  });
});
