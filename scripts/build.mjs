#!/usr/bin/env node
// `npm run build`: compiles the CLI to dist/ with esbuild — one ES module entry (dist/llmgw.js) and a chunk per lazily
// imported command, our own code bundled, every npm dependency left to node_modules, source maps beside each file so
// stack traces name the .ts lines. esbuild rather than tsc: it bundles (a few files to load at start instead of ~200,
// which is most of what `serve` spends before it listens) and takes a fraction of a second; `npm run typecheck` stays
// tsc. Also copies the API reference's browser bundle (a pinned devDependency) to dist/public/docs/ so /docs works with
// no network. `--outdir DIR` builds elsewhere (the tests use it). Dependency-free apart from esbuild.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The short git commit of the checkout, with `-dirty` when it has changes; undefined outside a git checkout. */
export function gitCommit(cwd = ROOT) {
  const git = (args) =>
    execFileSync("git", args, { cwd, stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  try {
    if (git(["rev-parse", "--show-toplevel"]) !== cwd) return undefined;
    const commit = git(["rev-parse", "--short=12", "HEAD"]);
    return git(["status", "--porcelain", "--untracked-files=no"]) ? `${commit}-dirty` : commit;
  } catch {
    return undefined;
  }
}

/** esbuild options both builds share: the CLI entry, our code bundled, JSX for hono/jsx, the commit defined. */
export function commonOptions(commit = gitCommit()) {
  return {
    entryPoints: [join(ROOT, "bin", "llmgw.ts")],
    bundle: true,
    platform: "node",
    target: "node20.19",
    jsx: "automatic",
    jsxImportSource: "hono/jsx",
    sourcemap: true,
    sourcesContent: false,
    legalComments: "none",
    logLevel: "warning",
    define: { __LLMGW_COMMIT__: JSON.stringify(commit ?? "") },
  };
}

/** The API reference's standalone browser bundle, and a notice naming it and its licence (its package has no file). */
export function apiReferenceFiles() {
  const dir = join(ROOT, "node_modules", "@scalar", "api-reference");
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const notice = `api-reference.js is ${pkg.name} ${pkg.version} (dist/browser/standalone.js), ${pkg.license} licence, ${pkg.homepage ?? pkg.repository?.url ?? ""}\n`;
  return { script: join(dir, "dist", "browser", "standalone.js"), notice };
}

/** Builds the package into `outdir` (default dist/). */
export async function buildPackage(outdir = join(ROOT, "dist")) {
  // the previous build's chunks go; a single binary built beside them stays
  for (const name of existsSync(outdir) ? readdirSync(outdir) : [])
    if (!name.startsWith("llmgw-")) rmSync(join(outdir, name), { recursive: true, force: true });
  const common = commonOptions();
  await build({
    ...common,
    // serve's fleet thread is a worker thread: an entry of its own (the single binary has none and places in-process)
    entryPoints: [...common.entryPoints, join(ROOT, "api", "fleet-thread", "fleet-thread.ts")],
    outdir,
    format: "esm",
    splitting: true,
    packages: "external",
    entryNames: "[name]",
    chunkNames: "[name]-[hash]",
    banner: { js: "#!/usr/bin/env node" },
  });
  chmodSync(join(outdir, "llmgw.js"), 0o755);
  buildPackageDocs(join(outdir, "public", "docs"));
  return outdir;
}

/** Writes the API reference's script, gzipped too, and its notice into `docs`. */
export function buildPackageDocs(docs) {
  mkdirSync(docs, { recursive: true });
  const ref = apiReferenceFiles();
  const script = readFileSync(ref.script);
  writeFileSync(join(docs, "api-reference.js"), script);
  // served gzipped to browsers that take it (4 MB → 1 MB)
  writeFileSync(join(docs, "api-reference.js.gz"), gzipSync(script, { level: 9 }));
  writeFileSync(join(docs, "api-reference.NOTICE"), ref.notice);
}

/** The value of `--name VALUE` in argv, or undefined. */
export function flag(argv, name) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildPackage(resolve(flag(process.argv, "--outdir") ?? join(ROOT, "dist")));
  const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  process.stdout.write(`built llmgw ${version}${gitCommit() ? ` (${gitCommit()})` : ""} into ${out}\n`);
}
