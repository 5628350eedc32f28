// The one logger of every llmgw process on Node (serve, agent, demo, mock engine): pino, JSON lines on stderr by
// default, human-readable when stderr is a terminal or LLMGW_LOG_FORMAT=pretty; LLMGW_LOG_LEVEL picks the level.
// Every line carries `name` (the process) and whatever ids the caller binds (nodeId, requestId, replicaId …).
import { pino } from "pino";
import pretty from "pino-pretty";

export type LogFields = Record<string, unknown>;

/** What every part writes to; `child` binds ids that every later line of it carries. */
export type Logger = {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
};

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

/** The format and level from the environment, with why a value was not taken. */
export function logSettings(
  env: Record<string, string | undefined>,
  tty: boolean,
): { format: "json" | "pretty"; level: (typeof LOG_LEVELS)[number]; problems: string[] } {
  const problems: string[] = [];
  const f = env.LLMGW_LOG_FORMAT?.trim().toLowerCase();
  if (f && f !== "json" && f !== "pretty")
    problems.push(`LLMGW_LOG_FORMAT must be json or pretty, not ${JSON.stringify(f)}`);
  const l = env.LLMGW_LOG_LEVEL?.trim().toLowerCase();
  const level = LOG_LEVELS.find((x) => x === l);
  if (l && !level) problems.push(`LLMGW_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, not ${JSON.stringify(l)}`);
  return { format: f === "json" || f === "pretty" ? f : tty ? "pretty" : "json", level: level ?? "info", problems };
}

const wrap = (p: pino.Logger): Logger => ({
  debug: (msg, f) => (f ? p.debug(f, msg) : p.debug(msg)),
  info: (msg, f) => (f ? p.info(f, msg) : p.info(msg)),
  warn: (msg, f) => (f ? p.warn(f, msg) : p.warn(msg)),
  error: (msg, f) => (f ? p.error(f, msg) : p.error(msg)),
  child: (f) => wrap(p.child(f)),
});

/**
 * The logger of process `name`, writing to stderr (fd 2) synchronously, so that a line written just before an exit is
 * not lost. A bad LLMGW_LOG_FORMAT or LLMGW_LOG_LEVEL is said on the first line and the default used.
 */
export function createNodeLogger(
  name: string,
  env: Record<string, string | undefined> = process.env,
  tty = !!process.stderr.isTTY,
): Logger {
  const s = logSettings(env, tty);
  const opts: pino.LoggerOptions = {
    name,
    level: s.level,
    base: { name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  const destination =
    s.format === "pretty"
      ? pretty({ destination: 2, sync: true, colorize: tty, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" })
      : pino.destination({ fd: 2, sync: true });
  const log = wrap(pino(opts, destination));
  for (const p of s.problems) log.warn(p);
  return log;
}
