import { execFile } from "node:child_process";
import { cpSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/process.js";

// drizzle-kit wants its output folder relative to the working directory
const out = join(ROOT, "test", ".tmp", `migrations-${process.pid}`);
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("migrations/", () => {
  it("matches api/db/schema.ts: drizzle-kit finds nothing left to generate", async () => {
    cpSync(join(ROOT, "migrations"), out, { recursive: true });
    const before = readdirSync(out).sort();
    const r = await promisify(execFile)(
      join(ROOT, "node_modules", ".bin", "drizzle-kit"),
      [
        "generate",
        "--dialect",
        "turso",
        "--schema",
        "./api/db/schema.ts",
        "--out",
        relative(ROOT, out),
        "--name",
        "drift",
      ],
      { cwd: ROOT },
    );
    expect(r.stdout).toContain("No schema changes");
    expect(readdirSync(out).sort()).toEqual(before);
  });
});
