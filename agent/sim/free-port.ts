// A free TCP port for a simulated node, a test server or the demo: bound to port 0, read, released.
import { createServer } from "node:net";

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
    s.on("error", fail);
  });
}
