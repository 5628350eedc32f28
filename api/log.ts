import type { Log } from "./deps.js";

/** A one-line-per-entry logger writing through `write` (stderr in the Node entry, console in the Worker). */
export function createLog(write: (line: string) => void, now: () => Date = () => new Date()): Log {
  const line = (level: string) => (msg: string, extra?: object) => {
    const tail = extra && Object.keys(extra).length ? ` ${JSON.stringify(extra)}` : "";
    write(`${now().toISOString()} ${level} ${msg}${tail}`);
  };
  return { info: line("info"), warn: line("warn"), error: line("error") };
}
