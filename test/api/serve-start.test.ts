import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterEach, expect, it } from "vitest";
import { ServerConfig } from "../../api/config.js";
import { startServer } from "../../api/node.js";
import { silentLog } from "../helpers/app.js";
import { tempDir } from "../helpers/db.js";

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
