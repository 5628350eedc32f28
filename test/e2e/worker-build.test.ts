import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { ROOT } from "../helpers/process.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("the Cloudflare Worker entry", () => {
  it("builds with `wrangler deploy --dry-run` into a bundle with no node: imports and no work at module scope", async () => {
    const r = await promisify(execFile)(
      join(ROOT, "node_modules", ".bin", "wrangler"),
      ["deploy", "--dry-run", "--outdir", tmp.dir],
      {
        cwd: ROOT,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      },
    );
    expect(r.stdout).toContain("--dry-run: exiting now.");
    const bundle = readFileSync(join(tmp.dir, "worker.js"), "utf8");
    expect(bundle).not.toMatch(/from\s*["']node:|require\(["']node:/);
    expect(bundle).toContain("registerNode");
    expect(bundle).toContain("scheduled");

    // nothing at module scope: Workers refuse timers, random values and I/O there (the runtime then fails to start)
    const script = `const refuse = (what) => () => { throw new Error(what + " called at module scope"); };
globalThis.setTimeout = refuse("setTimeout"); globalThis.setInterval = refuse("setInterval"); globalThis.fetch = refuse("fetch");
Math.random = refuse("Math.random"); crypto.getRandomValues = refuse("crypto.getRandomValues"); crypto.randomUUID = refuse("crypto.randomUUID");
const m = await import(process.argv[1]);
process.stdout.write(typeof m.default.fetch + " " + typeof m.default.scheduled);`;
    const loaded = await promisify(execFile)(process.execPath, [
      "--input-type=module",
      "-e",
      script,
      pathToFileURL(join(tmp.dir, "worker.js")).href,
    ]);
    expect(loaded.stdout).toBe("function function");
  });
});
