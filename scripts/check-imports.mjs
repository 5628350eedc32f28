#!/usr/bin/env node
// The layering rules of the source tree (docs/architecture.md, "Floors"), checked on every `npm run lint`:
//   - no import circle anywhere in api/, agent/, shared/, bin/ (type-only imports count: they bind files together too);
//   - api/db/ and api/placement/ import nothing from api/routes, api/console, api/router or api/views;
//   - api/console/ imports no api/routes/ file; api/ and agent/ never import each other; shared/ imports neither.
// Prints each broken rule with the files involved and exits 1; `--json` prints the graph's findings as JSON.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ROOTS = ["api", "agent", "shared", "bin"];

/**
 * Floors, lowest first: what the files of each may import (anything else is upward). Paths from the repository root.
 */
const FLOORS = [
  [/^api\/db\//, /^(api\/db\/|shared\/|migrations\/)/, "api/db/ is the floor: it imports only itself and shared/"],
  [/^api\/nodes\//, /^(api\/(nodes|db)\/|api\/log\.ts$|shared\/)/, "api/nodes/ sits on api/db/ only"],
  [
    /^api\/placement\//,
    /^(api\/(placement|nodes|db)\/|api\/(log|errors)\.ts$|shared\/)/,
    "api/placement/ sits on api/nodes/ and api/db/ only",
  ],
];

/** Rules as [files the rule covers, imports they may not reach, why]. */
const RULES = [
  [
    /^api\/(db|placement)\//,
    /^api\/(routes|console|router|views)\//,
    "the database and placement floors import nothing above them",
  ],
  [/^api\/views\//, /^api\/(routes|console|router)\//, "views sit under the routes and pages that show them"],
  [/^api\/console\//, /^api\/routes\//, "console pages import views, never route files"],
  [/^api\//, /^agent\//, "the API and the agent never import each other"],
  [/^agent\//, /^api\//, "the API and the agent never import each other"],
  [/^shared\//, /^(api|agent|bin)\//, "shared/ is used by both sides and imports neither"],
];

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (/\.(ts|tsx)$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

// static imports and re-exports (also `import type`), side-effect imports and dynamic `import("…")`
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** The repository file a relative specifier names (`./x.js` is `./x.ts` or `./x.tsx` on disk), or undefined. */
function resolveSpec(from, spec) {
  if (!spec.startsWith(".")) return undefined;
  const base = resolve(dirname(from), spec);
  const stem = base.replace(/\.(js|jsx|mjs)$/, "");
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

export function importGraph() {
  const files = ROOTS.filter((r) => existsSync(join(root, r))).flatMap((r) => walk(join(root, r), []));
  const graph = new Map();
  for (const file of files) {
    const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm, "$1");
    const edges = new Set();
    for (const m of text.matchAll(IMPORT)) {
      const target = resolveSpec(file, m[1] ?? m[2] ?? m[3]);
      if (target) edges.add(relative(root, target));
    }
    graph.set(relative(root, file), [...edges].sort());
  }
  return graph;
}

/** Strongly connected components of more than one file (or a file importing itself): Tarjan's algorithm. */
export function circles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const part = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(part.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

export function ruleBreaks(graph) {
  const out = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const broken = [
        ...RULES.filter(([covers, forbidden]) => covers.test(file) && forbidden.test(target)),
        ...FLOORS.filter(([covers, allowed]) => covers.test(file) && !allowed.test(target)),
      ];
      // one message per import: the first rule it breaks
      if (broken.length) out.push({ file, target, why: broken[0][2] });
    }
  }
  return out;
}

/** One path around a circle, for the message: follows edges inside the component back to its first file. */
function cyclePath(graph, part) {
  const inPart = new Set(part);
  const start = part[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of graph.get(v) ?? []) {
      if (w === start) {
        const path = [];
        for (let u = v; u !== null; u = prev.get(u)) path.unshift(u);
        return [...path, start];
      }
      if (inPart.has(w) && !prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return part;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const graph = importGraph();
  const found = circles(graph);
  const breaks = ruleBreaks(graph);
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify({ files: graph.size, circles: found, ruleBreaks: breaks }, null, 2));
  } else {
    for (const part of found) console.error(`import circle: ${cyclePath(graph, part).join(" → ")}`);
    for (const b of breaks) console.error(`${b.file} imports ${b.target}: ${b.why}`);
    if (!found.length && !breaks.length) console.log(`imports: ${graph.size} files, no circles, layering rules hold`);
  }
  process.exitCode = found.length || breaks.length ? 1 : 0;
}
