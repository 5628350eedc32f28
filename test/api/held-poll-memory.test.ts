// A parked long-poll keeps only what its answer needs: the request's Context (and the bindings it holds) can be
// collected while the poll waits. One closure of the poll route that captured the Context kept it alive through
// the held answer's closure for the whole wait: ~4 KiB a poll, ~40 MiB of heap at 10,000 agents.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  createTestApp,
  declareOneGpuDeployment,
  recordParks,
  registerNodes,
  serveOverHttp,
  type TestApp,
} from "../helpers/app.js";
import { until } from "../helpers/process.js";

// (V8's flags are the process's: contexts made after this in the unit lane's shared process have `gc` too)
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

let t: TestApp;
let tokens: Map<string, string>;
let port: number;
let close: () => Promise<void>;
const parked: string[] = [];
/** What was collected of the tracked requests. */
const collected = new Set<string>();
const registry = new FinalizationRegistry<string>((what) => collected.add(what));

beforeAll(async () => {
  t = await createTestApp({ wrapWaiter: recordParks(parked) });
  tokens = await registerNodes(t, ["n1"]);
  await declareOneGpuDeployment(t, 1);
  // the bindings @hono/node-server passes with each request: once the route has returned, only its Context holds them
  // (the Request itself @hono/node-server keeps until the connection closes, to abort its signal)
  const tracking = {
    fetch: (req: Request, env?: object) => {
      if (env && new URL(req.url).searchParams.has("wait")) registry.register(env, "bindings");
      return t.app.fetch(req, env);
    },
  };
  ({ port, close } = await serveOverHttp(t, tracking));
});
afterAll(() => close());

it("lets a parked long-poll's request Context be collected, and still answers the poll", async () => {
  const first = await t.call("GET", "/api/v1/agents/n1/assignments", { token: tokens.get("n1") });
  const index = Number(first.headers.get("x-llmgw-index"));
  let answered = false;
  const answer = fetch(`http://127.0.0.1:${port}/api/v1/agents/n1/assignments?index=${index}&wait=30`, {
    headers: { authorization: `Bearer ${tokens.get("n1")}` },
  }).then(async (r) => {
    answered = true;
    return { status: r.status, json: (await r.json()) as { index: number } };
  });
  await until(async () => parked.includes("n1"), 5000, "the poll parked");
  await until(
    async () => {
      gc();
      await new Promise((r) => setImmediate(r));
      return collected.has("bindings");
    },
    5000,
    "the parked poll's Context collected",
  ).catch((e: Error) => {
    throw new Error(`${e.message} (collected: ${[...collected].join(", ") || "nothing"})`);
  });
  // still parked, and answered when its node's shards change
  expect(answered).toBe(false);
  await t.admin("PUT", "/api/v1/deployments/d", { body: { spec: { model: "m", replicas: 0, pool: "p" } } });
  const a = await answer;
  expect(a.status).toBe(200);
  expect(a.json.index).toBeGreaterThan(index);
});
