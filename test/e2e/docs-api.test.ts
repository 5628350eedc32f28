import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { ROOT, startServe, stop } from "../helpers/process.js";

const ADMIN = "docs-test-admin-token-00000000000001";
const tmp = tempDir();
let server: Awaited<ReturnType<typeof startServe>>;
beforeAll(async () => {
  server = await startServe(["--db", join(tmp.dir, "db.sqlite")], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
});
afterAll(async () => {
  await stop(server);
  tmp.cleanup();
});

/** The ```sh blocks of a Markdown file, in order. */
function shBlocks(md: string): string[] {
  return [...md.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

describe("docs/api.md", () => {
  it("has curl examples that work as written, printing what their comments say", () => {
    const blocks = shBlocks(readFileSync(join(ROOT, "docs", "api.md"), "utf8"));
    expect(blocks.length).toBeGreaterThan(8);
    const script = ["set -euo pipefail", ...blocks].join("\n");
    const r = spawnSync("bash", ["-c", script], {
      cwd: tmp.dir,
      env: { ...process.env, LLMGW: server.url, ADMIN },
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const expected = blocks.flatMap((b) => [...b.matchAll(/#\s+(\S[^#\n]*)$/gm)].map((m) => m[1]!.trim()));
    expect(expected.length).toBeGreaterThan(6);
    let from = 0;
    for (const e of expected) {
      const at = r.stdout.indexOf(e, from);
      expect(at, `"${e}" in order in:\n${r.stdout}`).toBeGreaterThanOrEqual(0);
      from = at + e.length;
    }
  });
});
