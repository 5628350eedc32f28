// How long llmgw takes to start, built (dist/, what `npm start` and the package run) against the TypeScript source
// through tsx (how every process started before the build existed) and the single binary, beside bare `node -e 0` on
// the same machine: `llmgw --version` to exit, and `llmgw serve` until it prints that it listens (on a fresh database
// file, which it migrates, and on an existing one). Run `npm run build` (and `npm run build:binary` for the binary's
// line) first. Aims: --version ≤ 3× bare node; serve listening ≤ 1 s.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requireCurrentDist } from "./dist-check.js";
import { machine, median } from "./machine.js";

const ROOT = join(import.meta.dirname, "..");
const RUNS = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 9;
const BUILT = [process.execPath, join(ROOT, "dist", "llmgw.js")];
const TSX = [process.execPath, "--import", "tsx", join(ROOT, "bin", "llmgw.ts")];
const BINARY = join(ROOT, "dist", `llmgw-${process.platform}-${process.arch}`);

/** Milliseconds until `cmd` exits (or, with `until`, prints a line matching it, then it is killed). */
function time(cmd: string[], until?: RegExp): Promise<number> {
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const child = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (until?.test(out)) {
        ok(performance.now() - t0);
        child.kill("SIGKILL");
      }
    });
    child.once("exit", (code) =>
      until ? fail(new Error(`${cmd.join(" ")} exited (${code}) before ${until}: ${out}`)) : ok(performance.now() - t0),
    );
  });
}

/** The median of RUNS timings, after one warm-up run (file cache, code cache). */
async function measure(make: () => { cmd: string[]; until?: RegExp; after?: () => void }): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const m = make();
    const ms = await time(m.cmd, m.until);
    m.after?.();
    if (i > 0) xs.push(ms);
  }
  return median(xs);
}

requireCurrentDist();
const LISTENING = /serving on http/;
const dir = mkdtempSync(join(tmpdir(), "llmgw-bench-startup-"));
const serve = (cli: string[], fresh: boolean) => () => {
  const db = join(dir, fresh ? `fresh-${Math.random().toString(36).slice(2)}.db` : "existing.db");
  return {
    cmd: [...cli, "serve", "--port", "0", "--db", db],
    until: LISTENING,
    after: fresh ? () => rmSync(db, { force: true }) : undefined,
  };
};

const bare = await measure(() => ({ cmd: [process.execPath, "-e", "0"] }));
const rows: [string, number, string][] = [["node -e 0 (the floor)", bare, ""]];
const ratio = (ms: number) => `${(ms / bare).toFixed(1)}× bare node`;
const version = await measure(() => ({ cmd: [...BUILT, "--version"] }));
rows.push(["llmgw --version, built", version, ratio(version)]);
const versionTsx = await measure(() => ({ cmd: [...TSX, "--version"] }));
rows.push(["llmgw --version, tsx (before)", versionTsx, ratio(versionTsx)]);
let versionBinary: number | undefined;
if (existsSync(BINARY)) {
  versionBinary = await measure(() => ({ cmd: [BINARY, "--version"] }));
  rows.push(["llmgw --version, single binary", versionBinary, ratio(versionBinary)]);
}
const serveFresh = await measure(serve(BUILT, true));
rows.push(["llmgw serve listening, built, fresh database", serveFresh, ""]);
await time(serve(BUILT, false)().cmd, LISTENING);
const serveExisting = await measure(serve(BUILT, false));
rows.push(["llmgw serve listening, built, existing database", serveExisting, ""]);
const serveTsx = await measure(serve(TSX, false));
rows.push(["llmgw serve listening, tsx (before), existing database", serveTsx, ""]);
rmSync(dir, { recursive: true, force: true });

console.log(`startup: ${machine()}, median of ${RUNS} runs after one warm-up`);
for (const [what, ms, note] of rows) console.log(`  ${what.padEnd(56)} ${ms.toFixed(0).padStart(6)} ms  ${note}`);
console.log(
  `startup: node_ms=${bare.toFixed(0)} version_ms=${version.toFixed(0)} version_ratio=${(version / bare).toFixed(2)} ` +
    `serve_fresh_ms=${serveFresh.toFixed(0)} serve_ms=${serveExisting.toFixed(0)} tsx_version_ms=${versionTsx.toFixed(0)} tsx_serve_ms=${serveTsx.toFixed(0)}` +
    (versionBinary !== undefined ? ` binary_version_ms=${versionBinary.toFixed(0)}` : ""),
);
