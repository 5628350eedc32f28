// `llmgw serve` and `llmgw migrate`: configuration errors are printed in full and exit 2; a port in use or a database
// that cannot be used is one line naming the cause, exit 1.
import { loadServerConfig, type ServerFlags } from "../api/config.js";
import { describeDbError } from "../api/db/db-errors.js";
import { expectedMigrations } from "../api/db/journal.js";
import { migrationStatus } from "../api/db/migration-status.js";
import { openDb } from "../api/db/open.js";
import { applyMigrations, startServer } from "../api/node.js";
import { createNodeLogger } from "../shared/log-node.js";

const log = createNodeLogger("serve");

// past this after SIGTERM the process exits whatever still runs: a shutdown waiting on the database, or a handle that
// kept the event loop alive after it
const STOP_DEADLINE_MS = 5000;

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
  // the signals are ours from the start: one that arrives while starting stops the server once it listens
  let signalled: (sig: string) => void = () => {};
  const early = new Promise<string>((got) => (signalled = got));
  const onSignal = (sig: string) => () => signalled(sig);
  process.on("SIGTERM", onSignal("SIGTERM"));
  process.on("SIGINT", onSignal("SIGINT"));
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer(cfg, log, (line) => process.stdout.write(`${line}\n`));
  } catch (e) {
    process.stderr.write(`llmgw: could not start: ${describeDbError(e)}\n`);
    return 1;
  }
  if (running.reloadTls) {
    const reload = running.reloadTls;
    process.on("SIGHUP", () => {
      reload().then((why) =>
        why
          ? log.error(`SIGHUP: keeping the current certificate: ${why}`)
          : log.info(`SIGHUP: reloaded the TLS certificate and key; new connections get them`),
      );
    });
  }
  const sig = await early;
  let closed = false;
  // a second signal stops waiting; so does the deadline
  signalled = () => process.exit(closed ? 0 : 1);
  log.info(`${sig}: shutting down`);
  setTimeout(() => {
    if (!closed) log.warn(`shutdown took over ${STOP_DEADLINE_MS / 1000} s; exiting anyway`);
    process.exit(closed ? 0 : 1);
  }, STOP_DEADLINE_MS).unref();
  try {
    await running.close();
    closed = true;
    return 0;
  } catch (e) {
    log.error("shutdown failed", { error: describeDbError(e) });
    return 1;
  }
}

/** A database URL without the credentials it may carry. */
const shownUrl = (url: string) => url.replace(/\/\/[^@/]*@/, "//***@").replace(/([?&]authToken=)[^&]*/, "$1***");

/** Applies pending migrations to the configured database; returns the exit code. */
export async function runMigrate(flags: { db?: string }): Promise<number> {
  const cfg = config(flags);
  if (!cfg) return 2;
  let opened: Awaited<ReturnType<typeof openDb>> | undefined;
  try {
    opened = await openDb(cfg.dbUrl, cfg.dbAuthToken, cfg.dbSync);
    const before = await migrationStatus(opened.db, expectedMigrations);
    await applyMigrations(opened.db);
    process.stdout.write(
      before.pending.length ? `applied ${before.pending.join(", ")}\n` : "database schema already current\n",
    );
    return 0;
  } catch (e) {
    process.stderr.write(`llmgw migrate: cannot migrate ${shownUrl(cfg.dbUrl)}: ${describeDbError(e)}\n`);
    return 1;
  } finally {
    opened?.client.close();
  }
}
