import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dbUrlFromFlag, loadServerConfig, POLL_RESERVED_SUBREQUESTS } from "../../api/config.js";
import { constantTimeEqual, hashSecret, newSecret, secretKind } from "../../api/db/secrets.js";
import { VERSION } from "../../shared/version.js";
import { ROOT } from "../helpers/process.js";

describe("loadServerConfig", () => {
  it("has defaults that serve the embedded file database on loopback", () => {
    const r = loadServerConfig({});
    expect(r).toMatchObject({
      ok: true,
      config: { host: "127.0.0.1", port: 8080, dbUrl: "file:./data/llmgw.db", nodeLostAfterS: 180 },
    });
  });

  it("takes LLMGW_* variables, with flags winning", () => {
    const r = loadServerConfig(
      { LLMGW_PORT: "9000", LLMGW_HOST: "0.0.0.0", LLMGW_DB_URL: "libsql://db.example:8080" },
      { port: "9100", db: "/var/lib/llmgw/x.db" },
    );
    expect(r).toMatchObject({ ok: true, config: { port: 9100, host: "0.0.0.0", dbUrl: "file:/var/lib/llmgw/x.db" } });
  });

  it("lists every invalid value by the name it was set with", () => {
    const r = loadServerConfig(
      { LLMGW_PORT: "eighty", LLMGW_NODE_LOST_AFTER_S: "1", LLMGW_ADMIN_TOKEN: "short" },
      { db: "mysql://x" },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(4);
    expect(r.errors.join("\n")).toMatch(/^LLMGW_PORT: .*"eighty"/m);
    expect(r.errors.join("\n")).toMatch(/^LLMGW_NODE_LOST_AFTER_S: /m);
    expect(r.errors.join("\n")).toMatch(/^LLMGW_ADMIN_TOKEN: at least 24 characters/m);
    expect(r.errors.join("\n")).toMatch(/^--db: a file: path or a libsql:/m);
  });

  it("reads the router's timeouts, tries and body limit, and refuses nonsense", () => {
    const r = loadServerConfig({
      LLMGW_ROUTER_CONNECT_TIMEOUT_S: "2.5",
      LLMGW_ROUTER_FIRST_BYTE_TIMEOUT_S: "30",
      LLMGW_ROUTER_IDLE_TIMEOUT_S: "10",
      LLMGW_ROUTER_MAX_ATTEMPTS: "2",
      LLMGW_ROUTER_MAX_REQUEST_BYTES: "4096",
    });
    expect(r).toMatchObject({
      ok: true,
      config: {
        routerConnectTimeoutS: 2.5,
        routerFirstByteTimeoutS: 30,
        routerIdleTimeoutS: 10,
        routerMaxAttempts: 2,
        routerMaxRequestBytes: 4096,
      },
    });
    const bad = loadServerConfig({ LLMGW_ROUTER_MAX_ATTEMPTS: "0", LLMGW_ROUTER_CONNECT_TIMEOUT_S: "-1" });
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.errors.map((e) => e.split(":")[0]).sort()).toEqual([
        "LLMGW_ROUTER_CONNECT_TIMEOUT_S",
        "LLMGW_ROUTER_MAX_ATTEMPTS",
      ]);
  });

  it("reads the fair queue's slots per replica and deadline (64 and 30 s unless set; 0 s: no waiting)", () => {
    expect(loadServerConfig({})).toMatchObject({
      ok: true,
      config: { routerMaxInflightPerReplica: 64, routerQueueTimeoutS: 30 },
    });
    expect(
      loadServerConfig({ LLMGW_ROUTER_MAX_INFLIGHT_PER_REPLICA: "8", LLMGW_ROUTER_QUEUE_TIMEOUT_S: "0" }),
    ).toMatchObject({ ok: true, config: { routerMaxInflightPerReplica: 8, routerQueueTimeoutS: 0 } });
    const bad = loadServerConfig({ LLMGW_ROUTER_MAX_INFLIGHT_PER_REPLICA: "0", LLMGW_ROUTER_QUEUE_TIMEOUT_S: "-1" });
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.errors.map((e) => e.split(":")[0]).sort()).toEqual([
        "LLMGW_ROUTER_MAX_INFLIGHT_PER_REPLICA",
        "LLMGW_ROUTER_QUEUE_TIMEOUT_S",
      ]);
  });

  it("takes the Worker's subrequest budget only when a long-poll keeps some of it to wait with", () => {
    expect(loadServerConfig({})).toMatchObject({ ok: true, config: { workerSubrequests: 50 } });
    expect(loadServerConfig({ LLMGW_WORKER_SUBREQUESTS: "10000" })).toMatchObject({
      ok: true,
      config: { workerSubrequests: 10000 },
    });
    const low = loadServerConfig({ LLMGW_WORKER_SUBREQUESTS: String(POLL_RESERVED_SUBREQUESTS + 9) });
    expect(low.ok).toBe(false);
    if (!low.ok) expect(low.errors[0]).toMatch(/^LLMGW_WORKER_SUBREQUESTS: /);
  });

  it("never prints a secret's value, even a wrong one", () => {
    const r = loadServerConfig({ LLMGW_ADMIN_TOKEN: "short-secret-x", LLMGW_PORT: "eighty" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.join("\n")).not.toContain("short-secret-x");
    expect(r.errors.join("\n")).toContain('"eighty"');
  });

  it("warns about LLMGW_ variables it does not know, but not the CLI's", () => {
    const r = loadServerConfig({ LLMGW_PROT: "1", LLMGW_SERVER: "http://x", LLMGW_TOKEN: "t" });
    expect(r).toMatchObject({ ok: true, warnings: ["LLMGW_PROT is not a setting of llmgw serve and is ignored"] });
  });

  it("turns a bare --db path into a file: URL and keeps URLs", () => {
    expect(dbUrlFromFlag("./data/x.db")).toBe("file:./data/x.db");
    expect(dbUrlFromFlag("http://127.0.0.1:8081")).toBe("http://127.0.0.1:8081");
  });
});

describe("secrets", () => {
  it("carry a recognisable prefix and hash to 64 hex digits", async () => {
    const s = newSecret("join");
    expect(secretKind(s)).toBe("join");
    expect(secretKind("ghp_x")).toBeUndefined();
    expect(await hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abd")).toBe(false);
    expect(constantTimeEqual("abc", "ab")).toBe(false);
  });
});

describe("VERSION", () => {
  it("is package.json's version", () => {
    expect(VERSION).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
  });
});
