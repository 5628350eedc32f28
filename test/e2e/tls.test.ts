// `llmgw serve` over HTTPS with a test CA: a real agent trusting the CA by agent.yaml tls.ca_file registers and runs
// a replica, `llmgw ctl --ca-file` lists nodes, a streamed chat goes through the router, a client without the CA is
// refused, and SIGHUP serves a new certificate to new connections. Bad TLS settings end `serve` with one line.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:tls";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { killAll, runLlmgw } from "../helpers/process.js";
import { SIM_ADMIN, type SimCluster, startSimCluster } from "../helpers/sim.js";

const tmp = tempDir();
const at = (f: string) => join(tmp.dir, f);
const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: tmp.dir, stdio: "pipe" });

/** A server certificate for 127.0.0.1 and localhost, signed by the test CA, as `<name>.crt` and `<name>.key`. */
function serverCert(name: string) {
  writeFileSync(at("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-subj",
    `/CN=${name}`,
    "-out",
    `${name}.csr`,
  );
  openssl(
    "x509",
    ...["-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"],
    ...["-days", "2", "-extfile", "san.ext", "-out", `${name}.crt`],
  );
}

/** The common name of the certificate a new connection to `url` is served. */
function servedCn(url: string, ca: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((ok, fail) => {
    const s = connect({ host: hostname, port: Number(port), ca }, () => {
      ok(String(s.getPeerCertificate().subject.CN));
      s.end();
    });
    s.once("error", fail);
  });
}

let c: SimCluster;
let ca = "";

beforeAll(async () => {
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-subj",
    "/CN=llmgw test CA",
    "-days",
    "2",
    "-out",
    "ca.crt",
  );
  ca = readFileSync(at("ca.crt"), "utf8");
  serverCert("first");
  // the test's own calls (the sim's and this file's global fetch) trust the test CA
  const { setGlobalDispatcher } = await import("undici");
  setGlobalDispatcher(new Agent({ connect: { ca } }));
  c = await startSimCluster({
    dir: tmp.dir,
    scenario: "nodes:\n  - { id: l40s-a, kind: l40s, uuid_prefix: f101 }\n",
    serveEnv: { LLMGW_TLS_CERT: at("first.crt"), LLMGW_TLS_KEY: at("first.key"), LLMGW_HEARTBEAT_INTERVAL_S: "1" },
    agentExtra: { tls: { ca_file: at("ca.crt") } },
  });
}, 90_000);
afterAll(async () => {
  await c?.close();
  await killAll();
  tmp.cleanup();
});

describe("serve over HTTPS", () => {
  it("prints an https:// URL; the agent registers and polls through the CA it was given", async () => {
    expect(c.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(await c.nodeState("l40s-a")).toBe("ready");
  });

  it("ctl --ca-file lists the nodes; without it ctl says the certificate is not trusted", async () => {
    const env = { LLMGW_TOKEN: SIM_ADMIN, LLMGW_SERVER: c.url };
    const ok = await runLlmgw(["ctl", "--ca-file", at("ca.crt"), "nodes"], { env });
    expect(ok.output).toContain("l40s-a");
    expect(ok.code).toBe(0);
    const viaEnv = await runLlmgw(["ctl", "nodes"], { env: { ...env, LLMGW_CA_FILE: at("ca.crt") } });
    expect(viaEnv.code).toBe(0);
    const refused = await runLlmgw(["ctl", "nodes"], { env });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/not trusted: pass --ca-file/);
  });

  it("streams a chat completion through the router to the mock engine", async () => {
    await c.deploy({ name: "m", replicas: 1, gpu_class: "l40s-45g", about: "" });
    await c.ready("m", 1, 40_000);
    const key = await c.key();
    // the router learns of a new replica on its next refresh: 503 until then (404 while its table predates the
    // deployment: it serves the last table while it reads the next)
    let r = await c.chat(key, "m", { stream: true, max_tokens: 3 });
    for (let i = 0; (r.status === 503 || r.status === 404) && i < 100; i++) {
      await r.text();
      await new Promise((ok) => setTimeout(ok, 100));
      r = await c.chat(key, "m", { stream: true, max_tokens: 3 });
    }
    expect(r.status, await r.clone().text()).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await r.text();
    expect(text.match(/^data: \{/gm)?.length).toBeGreaterThanOrEqual(3);
    expect(text).toContain("data: [DONE]");
  }, 60_000);

  it("refuses a client that does not trust the CA", async () => {
    const err = await undiciFetch(`${c.url}/healthz`, { dispatcher: new Agent() }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error & { cause?: { code?: string } }).cause?.code)).toMatch(/CERT|SIGNATURE|ISSUER/);
  });

  it("on SIGHUP serves a new certificate to new connections, and keeps it when the new pair is bad", async () => {
    expect(await servedCn(c.url, ca)).toBe("first");
    serverCert("second");
    writeFileSync(at("first.crt"), readFileSync(at("second.crt")));
    writeFileSync(at("first.key"), readFileSync(at("second.key")));
    const server = c.server();
    server.child.kill("SIGHUP");
    await server.waitFor(/reloaded the TLS certificate/);
    expect(await servedCn(c.url, ca)).toBe("second");

    serverCert("third");
    writeFileSync(at("first.crt"), readFileSync(at("third.crt"))); // the key is still the second's
    server.child.kill("SIGHUP");
    await server.waitFor(/keeping the current certificate: .*is not the private key/);
    expect(await servedCn(c.url, ca)).toBe("second");
    expect(server.child.exitCode).toBeNull();
  });
});

describe("agent tls.insecure", () => {
  it("warns at start that the server is not verified", async () => {
    writeFileSync(
      at("insecure.yaml"),
      `server: ${c.url}\nstate_dir: ${at("insecure-state")}\nnvidia_smi: ${at("no-nvidia-smi")}\ntls: { insecure: true }\n`,
    );
    const r = await runLlmgw(["agent", "--config", at("insecure.yaml"), "--once", "--node-id", "insecure"]);
    expect(r.output).toMatch(
      /"level":"?(warn|40)"?.*tls\.insecure is set: the control plane's certificate is NOT verified/,
    );
  });
});

describe("serve's TLS settings", () => {
  it("needs both the certificate and the key (exit 2)", async () => {
    const r = await runLlmgw(["serve", "--port", "0", "--db", at("x.db"), "--tls-cert", at("second.crt")]);
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/--tls-cert is set but --tls-key \/ LLMGW_TLS_KEY is not/);
  });

  it("ends with one line for a missing file or a key of another certificate (exit 1)", async () => {
    const base = ["serve", "--port", "0", "--db", at("y.db")];
    const missing = await runLlmgw([...base, "--tls-cert", at("nope.crt"), "--tls-key", at("second.key")]);
    expect(missing.code).toBe(1);
    expect(missing.output.trim()).toMatch(/^llmgw: could not start: cannot read .*nope\.crt \(ENOENT\)/);
    const mismatch = await runLlmgw([...base, "--tls-cert", at("third.crt"), "--tls-key", at("second.key")]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.output.trim().split("\n")).toHaveLength(1);
    expect(mismatch.output).toMatch(/second\.key is not the private key of the certificate in .*third\.crt/);
  });
});
