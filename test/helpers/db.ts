import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A fresh temp directory, removed by the returned cleanup. */
export function tempDir(prefix = "llmgw-test-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A file: URL for a new database in a fresh temp directory. */
export function tempDbUrl(): { url: string; dir: string; cleanup: () => void } {
  const t = tempDir();
  return { url: `file:${join(t.dir, "llmgw.db")}`, ...t };
}
