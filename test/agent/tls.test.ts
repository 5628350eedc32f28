// The agent's TLS settings against a real HTTPS server with a self-signed certificate made by openssl.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../agent/client.js";
import { tlsDispatcher } from "../../agent/runtime.js";
import { tempDir } from "../helpers/db.js";

const tmp = tempDir();
const ca = join(tmp.dir, "cert.pem");
let server: Server;
let url = "";

beforeAll(async () => {
  const key = join(tmp.dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      key,
      "-out",
      ca,
    ],
    { stdio: "ignore" },
  );
  server = createServer({ key: readFileSync(key), cert: readFileSync(ca) }, (_req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ nodeId: "n1", receivedAt: 1, heartbeatIntervalS: 60 }));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server?.close();
  tmp.cleanup();
});

const statusCall = async (tls?: Parameters<typeof tlsDispatcher>[0]) =>
  createClient({ server: url, dispatcher: await tlsDispatcher(tls) }).status(
    "n1",
    { shards: [{ shardId: "r1-s0", state: "ready" }] },
    "llmgw_node_x",
  );

describe("agent TLS", () => {
  it("trusts the control plane through the configured CA file", async () => {
    expect(await statusCall({ caFile: ca, insecure: false })).toEqual({
      nodeId: "n1",
      receivedAt: 1,
      heartbeatIntervalS: 60,
    });
  });

  it("refuses a certificate it cannot verify, saying why", async () => {
    await expect(statusCall()).rejects.toThrow(
      /cannot reach https:\/\/127\.0\.0\.1:\d+: (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED)/,
    );
  });

  it("skips verification only when insecure is set (labs)", async () => {
    expect((await statusCall({ insecure: true })).nodeId).toBe("n1");
  });

  it("uses no dispatcher of its own when nothing is configured", async () => {
    expect(await tlsDispatcher(undefined)).toBeUndefined();
    expect(await tlsDispatcher({ insecure: false })).toBeUndefined();
  });
});
