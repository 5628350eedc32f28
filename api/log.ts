/**
 * Where every part of the API writes what happened; one line per entry (on Node the process's pino logger,
 * shared/log-node.ts; in the Worker console lines). `debug` where the logger has the level.
 */
export type Log = {
  debug?(msg: string, extra?: object): void;
  info(msg: string, extra?: object): void;
  warn(msg: string, extra?: object): void;
  error(msg: string, extra?: object): void;
};

/** A one-line-per-entry logger writing through `write` (stderr in the Node entry, console in the Worker). */
export function createLog(write: (line: string) => void, now: () => Date = () => new Date()): Log {
  const line = (level: string) => (msg: string, extra?: object) => {
    const tail = extra && Object.keys(extra).length ? ` ${JSON.stringify(extra)}` : "";
    write(`${now().toISOString()} ${level} ${msg}${tail}`);
  };
  return { info: line("info"), warn: line("warn"), error: line("error") };
}
