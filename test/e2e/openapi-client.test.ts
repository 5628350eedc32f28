import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { registerBody } from "../helpers/inventory.js";
import { ROOT, startServe, stop } from "../helpers/process.js";

const run = promisify(execFile);
const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);
const DIR = join(import.meta.dirname, "openapi-client");
const GENERATED = join(DIR, "generated");
const ADMIN = "openapi-client-test-admin-token-000001";

const tmp = tempDir();
let server: Awaited<ReturnType<typeof startServe>>;
beforeAll(async () => {
  server = await startServe(["--db", join(tmp.dir, "db.sqlite")], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
  rmSync(GENERATED, { recursive: true, force: true });
  mkdirSync(GENERATED, { recursive: true });
});
afterAll(async () => {
  await stop(server);
  rmSync(GENERATED, { recursive: true, force: true });
  tmp.cleanup();
});

describe("the live /openapi.json", () => {
  it("passes `redocly lint`", async () => {
    const spec = join(GENERATED, "openapi.json");
    writeFileSync(spec, await (await fetch(`${server.url}/openapi.json`)).text());
    const r = await run(bin("redocly"), ["lint", spec, "--config", join(ROOT, "redocly.yaml")], {
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    }).catch((e: { stdout: string; stderr: string }) => ({ stdout: e.stdout, stderr: e.stderr, failed: true }));
    expect(r).not.toHaveProperty("failed");
    expect(r.stderr + r.stdout).toMatch(/Your API description is valid/);
  });

  it("generates a typed client that compiles and registers a node", async () => {
    await run(bin("openapi-typescript"), [`${server.url}/openapi.json`, "-o", join(GENERATED, "api.d.ts")]);
    writeFileSync(
      join(GENERATED, "tsconfig.json"),
      JSON.stringify({
        extends: join(ROOT, "tsconfig.json"),
        compilerOptions: { noEmit: true, types: ["node"] },
        include: [join(DIR, "register.ts"), join(GENERATED, "api.d.ts")],
        exclude: [],
      }),
    );
    await run(bin("tsc"), ["-p", join(GENERATED, "tsconfig.json")]).catch((e: { stdout: string }) => {
      throw new Error(`generated client does not compile:\n${e.stdout}`);
    });

    const join_ = await (
      await fetch(`${server.url}/api/v1/join-tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
        body: "{}",
      })
    ).json();
    const out = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        join(DIR, "register.ts"),
        server.url,
        join_.token,
        ADMIN,
        JSON.stringify(registerBody("typed-client")),
      ],
      { cwd: ROOT },
    );
    expect(JSON.parse(out.stdout)).toEqual({ nodeId: "typed-client", imex: "ready", gpus: 8, missing: "not_found" });
  });
});
