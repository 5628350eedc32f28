// A TCP port that refuses connections for as long as a test file runs. A port `freePort` released can be taken by a
// test running beside this one (its own `freePort`, a server listening on port 0), which then answers instead of
// refusing. The local end of a connection held open is safe: nothing listens there, and while the connection lives no
// other socket can bind that port.
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterAll } from "vitest";

const servers: Server[] = [];
const sockets: Socket[] = [];
afterAll(() => {
  for (const s of sockets) s.destroy();
  return Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));
});

/** A port on 127.0.0.1 that refuses connections until the test file ends. */
export async function refusingPort(): Promise<number> {
  const server = createServer((s) => sockets.push(s));
  servers.push(server);
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const client = connect((server.address() as { port: number }).port, "127.0.0.1");
  sockets.push(client);
  await new Promise<void>((ok, fail) => client.once("connect", ok).once("error", fail));
  return client.localPort as number;
}
