#!/usr/bin/env node
// `npm run build:binary`: dist/llmgw-<platform>-<arch>, one executable for GPU nodes that needs no Node.js, npm or
// checkout — a Node single executable application: the CLI and every dependency bundled into one CommonJS file
// (esbuild), made into a blob by `node --experimental-sea-config` and injected into a copy of this node binary
// (postject). The two native modules cannot be loaded from inside it, so they are replaced by stubs that say so when
// used: koffi (NVML: discovery and doctor fall back to nvidia-smi with that warning) and libsql (the embedded database
// file: `serve` against a libSQL server still works). `--outdir DIR` builds elsewhere (the tests use it).
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { buildPackageDocs, commonOptions, flag, ROOT } from "./build.mjs";

const require = createRequire(import.meta.url);
const { inject } = require("postject");

/** What each native module's stub says when it is used. */
export const NATIVE_STUBS = {
  koffi: "NVML needs the npm package install of llmgw: the single binary cannot load koffi's native module",
  libsql:
    "the embedded database file needs the npm package install of llmgw: the single binary cannot load libSQL's native module; point --db at a libSQL server (http://, ws://, libsql://) or install the package",
};

/** An esbuild plugin that replaces the native modules by stubs throwing their message on first use. */
const nativeStubs = {
  name: "native-stubs",
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${Object.keys(NATIVE_STUBS).join("|")})$`) }, (args) => ({
      path: args.path,
      namespace: "native-stub",
    }));
    b.onLoad({ filter: /.*/, namespace: "native-stub" }, (args) => ({
      loader: "js",
      contents: `function fail() { throw new Error(${JSON.stringify(NATIVE_STUBS[args.path])}); }
const stub = new Proxy(fail, {
  get: (_, key) => (key === "default" ? stub : typeof key === "symbol" || key === "__esModule" || key === "then" ? undefined : fail()),
  apply: fail,
  construct: fail,
});
module.exports = stub;`,
    }));
    // ws's optional speed-ups, required inside try/catch: absent, without the warning a require from disk would print
    b.onResolve({ filter: /^(bufferutil|utf-8-validate)$/ }, (args) => ({ path: args.path, namespace: "absent" }));
    b.onLoad({ filter: /.*/, namespace: "absent" }, (args) => ({
      loader: "js",
      contents: `throw new Error("${args.path} is not in the single binary");`,
    }));
  },
};

/** Builds the single executable into `outdir` (default dist/); returns its path. */
export async function buildBinary(outdir = join(ROOT, "dist")) {
  const work = join(outdir, "binary-work");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const main = join(work, "llmgw.cjs");
  const common = commonOptions();
  await build({
    ...common,
    define: {
      ...common.define,
      __LLMGW_BINARY__: "true",
      "import.meta.url": "__llmgwMetaUrl",
      "import.meta.dirname": "__dirname",
    },
    outfile: main,
    format: "cjs",
    sourcemap: false,
    banner: { js: 'const __llmgwMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [nativeStubs],
  });
  const blob = join(work, "llmgw.blob");
  const seaConfig = join(work, "sea-config.json");
  // the API reference's script for /docs (what dist/public/docs/ holds in the package)
  const docs = join(outdir, "binary-docs");
  await buildPackageDocs(docs);
  const assets = {
    "api-reference.js": join(docs, "api-reference.js"),
    "api-reference.js.gz": join(docs, "api-reference.js.gz"),
  };
  writeFileSync(
    seaConfig,
    JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, assets }),
  );
  execFileSync(process.execPath, ["--experimental-sea-config", seaConfig], { stdio: ["ignore", "ignore", "inherit"] });
  const binary = join(outdir, `llmgw-${process.platform}-${process.arch}`);
  rmSync(binary, { force: true });
  copyFileSync(process.execPath, binary);
  chmodSync(binary, 0o755);
  await inject(binary, "NODE_SEA_BLOB", readFileSync(blob), {
    sentinelFuse: "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2",
  });
  rmSync(work, { recursive: true, force: true });
  rmSync(docs, { recursive: true, force: true });
  return binary;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const binary = await buildBinary(resolve(flag(process.argv, "--outdir") ?? join(ROOT, "dist")));
  process.stdout.write(`built ${binary} (node ${process.version})\n`);
}
