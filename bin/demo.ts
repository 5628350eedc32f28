// `llmgw demo`: a whole simulated cluster in one command, for trying llmgw without GPUs. Real processes — the control
// plane, one agent per node of the scenario (agent/sim/: GB200 trays, an HGX H100 board, an A100 in MIG mode, L40S
// nodes on InfiniBand, all on the fake nvidia-smi), the mock engines they start — and a ready API key.

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { killEngines, LLMGW, processAlive, recordedPid } from "../agent/sim/cluster.js";
import { DEFAULT_SCENARIO, loadScenario, type Scenario } from "../agent/sim/scenario.js";
import { simDeclarations, startSimCluster } from "../agent/sim/start.js";
import { createNodeLogger, type Logger } from "../shared/log-node.js";

export type DemoFlags = {
  port?: string;
  data?: string;
  keep?: boolean;
  exitWhenReady?: boolean;
  timeout?: string;
  scenario?: string;
};

const TOKENS_PER_S = ["--tokens-per-s", "20"];

type Child = { name: string; child: ChildProcess; exited: Promise<void>; output: () => string };

// what the demo does, on the same logger as every llmgw process; usage errors stay plain lines on stderr
let logger: Logger | undefined;
const note = (line: string) => (logger ??= createNodeLogger("demo")).info(line);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a child process whose output goes to a log file (and is kept for the failure message). */
function launch(name: string, args: string[], env: Record<string, string>, log: string): Child {
  const child = spawn(process.execPath, [LLMGW, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const file = createWriteStream(log, { flags: "a" });
  let out = "";
  const onData = (d: Buffer) => {
    out = (out + d.toString()).slice(-8000);
    file.write(d);
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<void>((ok) =>
    child.once("exit", () => {
      file.end();
      ok();
    }),
  );
  return { name, child, exited, output: () => out };
}

/** Runs the demo until Ctrl-C (or until ready with --exit-when-ready); returns the exit code. */
export async function runDemo(flags: DemoFlags): Promise<number> {
  const port = flags.port ?? "8080";
  const timeoutMs = Number(flags.timeout ?? "120") * 1000;
  if (!/^\d+$/.test(port) || Number(port) > 65535 || !(timeoutMs > 0)) {
    process.stderr.write("llmgw demo: --port takes 0–65535, --timeout a positive number of seconds\n");
    return 2;
  }
  let scenario: Scenario;
  try {
    scenario = loadScenario(resolve(flags.scenario ?? DEFAULT_SCENARIO));
  } catch (e) {
    process.stderr.write(`llmgw demo: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  if (!scenario.models.length) {
    process.stderr.write("llmgw demo: the scenario declares no models\n");
    return 2;
  }
  const { nodes, models } = scenario;
  const dir = flags.data ? resolve(flags.data) : mkdtempSync(join(tmpdir(), "llmgw-demo-"));
  mkdirSync(dir, { recursive: true });
  const stop = new AbortController();
  const onSignal = (sig: string) => {
    if (!stop.signal.aborted) note(`${sig}: stopping everything`);
    stop.abort(new Error(`stopped by ${sig}`));
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  const children: Child[] = [];
  const stateDirs: string[] = [];
  const deadline = Date.now() + timeoutMs;

  /** Polls `fn` until it returns a value, failing at the deadline, on a signal, or when a child dies. */
  const until = async <T>(what: string, fn: () => Promise<T | undefined>): Promise<T> => {
    for (;;) {
      stop.signal.throwIfAborted();
      const dead = children.find((c) => c.child.exitCode !== null || c.child.signalCode !== null);
      if (dead)
        throw new Error(
          `${dead.name} exited (${dead.child.exitCode ?? dead.child.signalCode}) while waiting for ${what}; its last output:\n${dead.output()}`,
        );
      try {
        const v = await fn();
        if (v !== undefined) return v;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error(`not ready within ${timeoutMs / 1000} s: still waiting for ${what}`);
      await sleep(200);
    }
  };

  let code = 0;
  try {
    const tokenFile = join(dir, "demo-admin-token");
    const admin = existsSync(tokenFile)
      ? readFileSync(tokenFile, "utf8").trim()
      : `llmgw_adm_${randomBytes(20).toString("hex")}`;
    writeFileSync(tokenFile, `${admin}\n`, { mode: 0o600 });
    note(`control plane and cluster state in ${dir}`);
    const logs: Record<string, string> = { "llmgw serve": "serve.log" };
    const sim = await startSimCluster({
      dir,
      scenario,
      admin,
      serveArgs: ["--port", port, "--db", join(dir, "llmgw.db")],
      agentExtra: { check_interval_s: 3 },
      spawn: (name, args, env) => {
        const child = launch(name, args, env, join(dir, logs[name] ?? `${name.replace(/ /g, "-")}.log`));
        children.push(child);
        return child;
      },
      wait: (what, fn) => until(what, fn),
    });
    const { url, api } = sim;
    stateDirs.push(...[...sim.agents.values()].map((a) => a.stateDir));
    note(`started ${nodes.length} agents: ${describeNodes(scenario)}`);

    for (const m of models) {
      const d = simDeclarations(m, TOKENS_PER_S);
      await api("PUT", `/api/v1/models/${m.name}`, d.model);
      await api("PUT", `/api/v1/deployments/${m.name}`, d.deployment);
      note(`deployment ${m.name}: ${m.replicas} × (${m.about}), mock engine`);
    }
    // ready: what the router serves (the deployment's count: a degraded replica too under `transport: prefer`)
    for (const m of models) {
      await until(`${m.replicas} ready replica(s) of ${m.name}`, async () => {
        const d: { status: { ready: number } } = await api("GET", `/api/v1/deployments/${m.name}`);
        return d.status.ready >= m.replicas ? true : undefined;
      });
    }
    const degraded = await degradedShards(api);

    const created = await api("PUT", "/api/v1/api-keys/demo", { spec: {} });
    const key: string = created.secret ?? (await api("POST", "/api/v1/api-keys/demo/rotate")).secret;
    // the router refreshes its view of ready replicas on its own timer: ready is when it lists every model
    await until("the router to serve every model", async () => {
      const r = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      const ids = new Set(((await r.json()) as { data: { id: string }[] }).data.map((m) => m.id));
      return models.every((m) => ids.has(m.name)) ? true : undefined;
    });
    const body = JSON.stringify({
      model: models[0]!.name,
      stream: true,
      messages: [{ role: "user", content: "Hello" }],
    });
    const replicas = models.reduce((n, m) => n + m.replicas, 0);
    process.stdout.write(
      [
        "",
        `llmgw demo is ready: ${nodes.length} simulated nodes (${describeNodes(scenario)}), ${replicas} replicas of mock engines.`,
        "",
        `  console:      ${url}/admin   (log in with the admin token; the rack view is ${url}/admin/nvlink)`,
        `  admin token:  ${admin}`,
        `  API key:      ${key}`,
        "  models:",
        ...models.map((m) => `    ${m.name.padEnd(12)} ×${m.replicas}  ${m.about}`),
        ...(degraded.length
          ? ["  degraded (served under transport: prefer):", ...degraded.map((d) => `    ${d}`)]
          : []),
        "",
        "Stream a chat completion through the router:",
        "",
        `  curl -N ${url}/v1/chat/completions -H "Authorization: Bearer ${key}" -H 'content-type: application/json' -d '${body}'`,
        "",
        `Logs in ${dir}. ${flags.exitWhenReady ? "Stopping now (--exit-when-ready)." : "Ctrl-C stops everything."}`,
        "",
      ].join("\n"),
    );
    if (!flags.exitWhenReady) await new Promise((ok) => stop.signal.addEventListener("abort", ok, { once: true }));
  } catch (e) {
    if (!stop.signal.aborted) {
      process.stderr.write(`llmgw demo: ${e instanceof Error ? e.message : String(e)}\n`);
      code = 1;
    }
  } finally {
    await stopAll(children, stateDirs);
    if (!flags.data && !flags.keep) rmSync(dir, { recursive: true, force: true });
    else note(`kept ${dir}`);
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
  }
  return code;
}

const KIND_NAMES: Record<string, string> = {
  gb200: "GB200 tray (4 GPUs)",
  "hgx-h100": "HGX H100 board (8 GPUs)",
  "a100-mig": "A100 in MIG mode",
  l40s: "L40S",
};

/** "6× GB200 tray (4 GPUs), 1× HGX H100 board (8 GPUs), …" */
function describeNodes(s: Scenario): string {
  const counts = new Map<string, number>();
  for (const n of s.nodes) counts.set(n.kind, (counts.get(n.kind) ?? 0) + 1);
  const fabrics = [...new Set(s.nodes.flatMap((n) => (n.ib_fabric ? [n.ib_fabric] : [])))];
  return [
    ...[...counts].map(([k, c]) => `${c}× ${KIND_NAMES[k] ?? k}`),
    ...fabrics.map((f) => `InfiniBand fabric ${f}`),
  ].join(", ");
}

/** Stops the agents first (so nothing restarts an engine), then every engine's process group, then the server. */
async function stopAll(children: Child[], stateDirs: string[]): Promise<void> {
  const term = async (list: Child[]) => {
    for (const c of list) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill("SIGTERM");
    const all = Promise.all(list.map((c) => c.exited));
    if ((await Promise.race([all.then(() => true), sleep(5000).then(() => false)])) === false) {
      for (const c of list) c.child.kill("SIGKILL");
      await all;
    }
  };
  await term(children.filter((c) => c.name !== "llmgw serve"));
  const engines = stateDirs.flatMap((d) => {
    try {
      return readdirSync(join(d, "shards"))
        .filter((n) => n.endsWith(".json"))
        .map((n) => recordedPid(d, n.slice(0, -5)));
    } catch {
      return [];
    }
  });
  killEngines(stateDirs, "SIGTERM");
  for (let i = 0; i < 30 && engines.some(processAlive); i++) await sleep(100);
  killEngines(stateDirs, "SIGKILL");
  await term(children.filter((c) => c.name === "llmgw serve"));
}

type DemoReplica = {
  id: string;
  deployment: string;
  shards: { transport: { verdict: string; reason?: string } | null }[];
};

/** Each degraded shard's replica and reason, as the demo prints them. */
async function degradedShards(api: (method: string, path: string) => Promise<{ items: DemoReplica[] }>) {
  const { items } = await api("GET", "/api/v1/replicas");
  return items.flatMap((r) =>
    r.shards.flatMap((s) =>
      s.transport?.verdict === "degraded" ? [`${r.deployment} (${r.id}): ${s.transport.reason}`] : [],
    ),
  );
}
