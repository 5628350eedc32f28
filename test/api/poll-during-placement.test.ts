// A long-poll parks at once (or answers at once, when its index is behind), even while a placement run goes on: the
// run's commit wakes it through the poll hub. At fleet size a poll that first waited for the run going on, and the one
// queued after it, held its agent for seconds, and then parked with the index it read before both.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type PlaceResult, placeIfNeeded } from "../../api/placement/apply.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import {
  createTestApp,
  declareOneGpuDeployment,
  defaultSettings,
  recordParks,
  registerNodes,
  type TestApp,
} from "../helpers/app.js";
import { until } from "../helpers/process.js";

let t: TestApp;
let tokens: Map<string, string>;
/** While set, each placement run waits for it to resolve (`open`) before it runs. */
let gate: Promise<void> | undefined;
let open = () => {};
const parked: string[] = [];
const cache = newPlacementCache();

beforeAll(async () => {
  t = await createTestApp({
    place: (now): Promise<PlaceResult> | undefined =>
      gate?.then(() => placeIfNeeded(t.store, now, defaultSettings(), cache)),
    wrapWaiter: recordParks(parked),
  });
  tokens = await registerNodes(t, ["n1"]);
  await declareOneGpuDeployment(t, 1);
});
afterAll(() => {
  open();
  return t.close();
});

it("parks a long-poll while a placement run goes on (or answers one that is behind), and answers it with what that run commits", async () => {
  const poll = (query: string) => t.call("GET", `/api/v1/agents/n1/assignments${query}`, { token: tokens.get("n1") });
  const before = await poll("");
  expect(before.json.shards).toHaveLength(1);

  gate = new Promise<void>((ok) => (open = ok));
  // the deployment scaled to none: placement starts after the write's answer, and is held
  expect(
    (await t.admin("PUT", "/api/v1/deployments/d", { body: { spec: { model: "m", replicas: 0, pool: "p" } } })).status,
  ).toBe(200);
  const answer = poll(`?index=${before.json.index}&wait=30`);
  await until(async () => parked.includes("n1"), 5000, "the poll parked while the run was held");
  // one whose index is behind the node's answers at once, with what is committed
  const behind = await poll("?index=0&wait=30");
  expect(behind.json.index).toBe(before.json.index);
  expect(behind.json.shards).toHaveLength(1);

  gate = undefined;
  open();
  const after = await answer;
  expect(after.status).toBe(200);
  expect(after.json.index).toBeGreaterThan(before.json.index);
  expect(after.json.shards).toEqual([]);
});
