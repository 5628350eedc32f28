// `llmgw agent` as an operator meets it before anything runs: a bad agent.yaml, a missing server, a control plane
// that cannot be reached by `--once`.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HGX_SMI, writeAgentConfig } from "../helpers/agents.js";
import { tempDir } from "../helpers/db.js";
import { runLlmgw } from "../helpers/process.js";
import { refusingPort } from "../helpers/refusing-port.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("llmgw agent (command line)", () => {
  it("lists every problem of a bad agent.yaml and exits 2", async () => {
    const cfg = join(tmp.dir, "bad.yaml");
    writeFileSync(cfg, "server: not-a-url\nrestart_limit: -1\nengines:\n  tgi: {}\nbogus: 1\n");
    const r = await runLlmgw(["agent", "--config", cfg]);
    expect(r.code).toBe(2);
    for (const line of ["server: ", "restart_limit: ", "engines.tgi: unknown key", "bogus: unknown key"])
      expect(r.output).toContain(line);
  });

  it("says where to set the control plane when none is given, exit 2", async () => {
    const cfg = join(tmp.dir, "empty.yaml");
    writeFileSync(cfg, "mgmt_addr: 10.0.0.1\n");
    const r = await runLlmgw(["agent", "--config", cfg, "--once"]);
    expect(r.code).toBe(2);
    expect(r.output).toContain("no control plane: set `server` in agent.yaml or pass --server URL");
  });

  it("--once against a control plane that is down exits 1 with one line saying so", async () => {
    const port = await refusingPort();
    const { config } = writeAgentConfig({
      nodeId: "lonely",
      server: `http://127.0.0.1:${port}`,
      joinToken: "llmgw_join_x",
      dir: tmp.dir,
      ports: [20000, 20009],
    });
    const r = await runLlmgw(["agent", "--config", config, "--once"], { env: HGX_SMI });
    expect(r.code).toBe(1);
    const last = r.output.trim().split("\n").at(-1)!;
    expect(last).toMatch(
      new RegExp(`^llmgw: POST /api/v1/agents/register: cannot reach http://127.0.0.1:${port}: ECONNREFUSED$`),
    );
  });
});
