// Usage errors of every subcommand exit 2 (an unknown flag or command, a missing argument or value, a value outside
// its choices), as --help and docs/operations.md say; ctl's common options go before the subcommand or after it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import { runLlmgw, startServe, stop } from "../helpers/process.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("usage errors exit 2", () => {
  it.each([
    ["no command", [], /Usage: llmgw/],
    ["an unknown command", ["launch"], /unknown command 'launch'/],
    ["an unknown global flag", ["--colour"], /unknown option '--colour'/],
    ["serve: an unknown flag", ["serve", "--colour", "red"], /unknown option '--colour'/],
    ["serve: a flag without its value", ["serve", "--port"], /option '--port <port>' argument missing/],
    ["migrate: an unknown flag", ["migrate", "--colour"], /unknown option '--colour'/],
    ["mock-engine: a required flag missing", ["mock-engine", "--model", "m"], /required option '--port <port>'/],
    ["mock-engine-cli: the engine missing", ["mock-engine-cli"], /missing required argument 'engine'/],
    ["demo: an unknown flag", ["demo", "--colour"], /unknown option '--colour'/],
    ["agent: an unknown flag", ["agent", "--colour"], /unknown option '--colour'/],
    ["agent: an argument it does not take", ["agent", "now"], /too many arguments for 'agent'/],
    [
      "agent: a server that is not a URL",
      ["agent", "--server", "notaurl", "--once"],
      /is not an http:\/\/ or https:\/\/ URL/,
    ],
    ["agent inventory: an unknown flag", ["agent", "inventory", "--colour"], /unknown option '--colour'/],
    ["doctor: an unknown flag", ["doctor", "--colour"], /unknown option '--colour'/],
    ["ctl: an unknown flag", ["ctl", "--colour"], /unknown option '--colour'/],
    [
      "ctl nodes: a state that is not one",
      ["ctl", "nodes", "--state", "asleep"],
      /Allowed choices are ready, cordoned/,
    ],
    ["ctl node: the id missing", ["ctl", "node"], /missing required argument 'id'/],
  ])("%s", async (_, args, message) => {
    const r = await runLlmgw(args, { cwd: tmp.dir });
    expect(r.output).toMatch(message);
    expect(r.code).toBe(2);
  });

  it("--help and --version still exit 0", async () => {
    for (const args of [
      ["--help"],
      ["--version"],
      ["serve", "--help"],
      ["ctl", "--help"],
      ["ctl", "nodes", "--help"],
    ]) {
      expect((await runLlmgw(args, { cwd: tmp.dir })).code).toBe(0);
    }
  });
});

describe("ctl's --server, --token and --json before the subcommand", () => {
  const ADMIN = "cli-usage-admin-token-00000000000001";
  let server: Awaited<ReturnType<typeof startServe>>;
  beforeAll(async () => {
    server = await startServe(["--db", `${tmp.dir}/ctl.db`], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(() => stop(server));

  it("are accepted before the subcommand as after it; the subcommand's own win", async () => {
    const before = await runLlmgw(["ctl", "--server", server.url, "--token", ADMIN, "--json", "nodes"]);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.output)).toEqual({ items: [] });
    const after = await runLlmgw(["ctl", "nodes", "--server", server.url, "--token", ADMIN, "--json"]);
    expect([after.code, after.output]).toEqual([0, before.output]);
    const grouped = await runLlmgw(["ctl", "--server", server.url, "--token", ADMIN, "tokens", "list", "--json"]);
    expect(grouped.code).toBe(0);
    expect(JSON.parse(grouped.output).items.length).toBeGreaterThan(0);
    const both = await runLlmgw(["ctl", "--server", "http://127.0.0.1:1", "nodes", "--server", server.url], {
      env: { LLMGW_TOKEN: ADMIN },
    });
    expect(both.code).toBe(0);
  });
});
