// The least a Node proxy can do in front of the same engines, for bench/router.ts: a node:http server, one undici
// Agent, round-robin over the engines, the request body read whole and parsed (the router must read `model`), the
// response relayed chunk by chunk. No keys, picking, limits, usage or metrics: what it costs is the runtime's share of
// what the router costs, and the rest is llmgw's own work.
import { createServer } from "node:http";
import { Agent } from "undici";

/** Starts the floor proxy on a free localhost port. */
export async function startNodeFloor(engines: string[]): Promise<{ url: string; close(): Promise<void> }> {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  let next = 0;
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (b: Buffer) => parts.push(b));
    req.on("end", async () => {
      try {
        const body = Buffer.concat(parts).toString("utf8");
        JSON.parse(body);
        const up = await agent.request({
          origin: engines[next++ % engines.length]!,
          path: req.url!,
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"]) });
        for await (const chunk of up.body) res.write(chunk);
        res.end();
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
      await agent.close();
    },
  };
}
