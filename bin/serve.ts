// `llmgw serve` and `llmgw migrate`: configuration errors are printed in full and exit non-zero.
import { loadServerConfig, type ServerFlags } from "../api/config.js";
import { expectedMigrations } from "../api/db/journal.js";
import { migrationStatus } from "../api/db/migration-status.js";
import { createLog } from "../api/log.js";
import { applyMigrations, openDb, startServer } from "../api/node.js";

const log = createLog((line) => process.stderr.write(`${line}\n`));

function config(flags: ServerFlags) {
  const result = loadServerConfig(process.env, flags);
  if (!result.ok) {
    process.stderr.write(`llmgw: invalid configuration:\n${result.errors.map((e) => `  ${e}`).join("\n")}\n`);
    return undefined;
  }
  for (const w of result.warnings) log.warn(w);
  return result.config;
}

/** Runs the server until SIGTERM or SIGINT; returns the exit code. */
export async function runServe(flags: ServerFlags): Promise<number> {
  const cfg = config(flags);
  if (!cfg) return 2;
  let running;
  try {
    running = await startServer(cfg, log, (line) => process.stdout.write(`${line}\n`));
  } catch (e) {
    process.stderr.write(`llmgw: could not start: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  await new Promise<void>((done) => {
    const stop = (sig: string) => {
      log.info(`${sig}: shutting down`);
      running.close().then(done, done);
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  return 0;
}

/** Applies pending migrations to the configured database; returns the exit code. */
export async function runMigrate(flags: { db?: string }): Promise<number> {
  const cfg = config(flags);
  if (!cfg) return 2;
  const { client, db } = await openDb(cfg.dbUrl, cfg.dbAuthToken);
  try {
    const before = await migrationStatus(db, expectedMigrations);
    await applyMigrations(db);
    process.stdout.write(
      before.pending.length ? `applied ${before.pending.join(", ")}\n` : "database schema already current\n",
    );
    return 0;
  } catch (e) {
    process.stderr.write(`llmgw migrate: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    client.close();
  }
}
