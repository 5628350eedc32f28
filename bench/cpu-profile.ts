// A CPU profile of a bench's own process over a stretch of its run (bench/fleet-agents.ts profiles its agents over the
// changes), through the inspector: what `node --cpu-prof` gives for a whole process.
import { mkdir, writeFile } from "node:fs/promises";
import { Session } from "node:inspector";

/** A CPU profile of this process between start and stop, written to DIR/NAME.cpuprofile (the inspector's). */
export function profiler(dir: string, name: string) {
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((ok, no) => session.post(method, (e, r) => (e ? no(e) : ok(r))));
  return {
    start: () => void post("Profiler.enable").then(() => post("Profiler.start")),
    async stop() {
      const { profile } = (await post("Profiler.stop")) as { profile: unknown };
      // serve makes the directory only as it exits, after the agents stop
      await mkdir(dir, { recursive: true });
      await writeFile(`${dir}/${name}.cpuprofile`, JSON.stringify(profile));
    },
  };
}
