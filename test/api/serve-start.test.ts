import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterEach, expect, it, vi } from "vitest";
import { ServerConfig } from "../../api/config.js";
import { startServer } from "../../api/node.js";
import { silentLog } from "../helpers/app.js";
import { tempDir } from "../helpers/db.js";
import { H100_XML, inventoryFromCapture, registerBody } from "../helpers/inventory.js";

const tmp = tempDir();
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

it("says it is serving only once the admin token from LLMGW_ADMIN_TOKEN is stored", async () => {
  const url = `file:${join(tmp.dir, "db.sqlite")}`;
  const said: string[] = [];
  const config = ServerConfig.parse({ dbUrl: url, port: 0, adminToken: "llmgw_adm_from-the-environment-0001" });
  const running = await startServer(config, silentLog, (line) => said.push(line));
  close = running.close;
  expect(said[0]).toMatch(/serving on http:\/\/127\.0\.0\.1:\d+/);
  // read before anything else can run: a script that starts llmgw and calls it at once is not refused 401
  const db = createClient({ url });
  const rows = await db.execute("SELECT name FROM admin_tokens");
  db.close();
  expect(rows.rows.map((r) => r.name)).toEqual(["LLMGW_ADMIN_TOKEN"]);
});

it("prints the first-start admin token after the addresses, and it is already stored", async () => {
  const url = `file:${join(tmp.dir, "first.sqlite")}`;
  const said: string[] = [];
  const running = await startServer(ServerConfig.parse({ dbUrl: url, port: 0 }), silentLog, (l) => said.push(l));
  close = running.close;
  const db = createClient({ url });
  const rows = await db.execute("SELECT name FROM admin_tokens");
  db.close();
  expect(rows.rows.map((r) => r.name)).toEqual(["first-start"]);
  await new Promise((r) => setImmediate(r));
  expect(said.findIndex((l) => /admin token \(shown once/.test(l))).toBeGreaterThan(
    said.findIndex((l) => /API docs/.test(l)),
  );
  expect(said.at(-1)).toMatch(/^\s+llmgw_adm_/);
});

it("reads the fleet for placement at start-up, before any change asks it to place", async () => {
  const url = `file:${join(tmp.dir, "fleet.sqlite")}`;
  const adminToken = "llmgw_adm_fleet-read-at-start-0001";
  const config = ServerConfig.parse({ dbUrl: url, port: 0, adminToken });
  const first = await startServer(config, silentLog, () => {});
  for (const id of ["n1", "n2"]) {
    const r = await fetch(`${first.url}/api/v1/agents/register`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(registerBody(id, inventoryFromCapture(H100_XML))),
    });
    expect(r.status).toBe(201);
  }
  await first.close();
  const lines: string[] = [];
  const log = { ...silentLog, info: (msg: string) => void lines.push(msg) };
  const running = await startServer(config, log, () => {});
  close = running.close;
  await vi.waitFor(
    () => expect(lines.filter((l) => /^read 2 nodes for placement in \d+ ms$/.test(l))).toHaveLength(1),
    {
      timeout: 10_000,
    },
  );
});
