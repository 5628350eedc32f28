// One measured change of bench/fleet.ts: a deployment written through the API, then how long until placement has put
// its replicas on nodes, and until each affected agent's long-poll has brought it the new shards (delivery), as the
// agents themselves saw it. Then whether the shards' stored states agree with what their agents last reported.
import type { apiCaller } from "../test/helpers/process.js";
import type { Delivery } from "./fleet-messages.js";

type Api = ReturnType<typeof apiCaller>;
export type ChangeResult = {
  putStatus: number;
  putMs: number;
  /** Until the deployment's status says every replica placed (or placement stopped making progress). */
  placedMs: number;
  placed: number;
  /** The placed count as the status reads saw it move (ms since the PUT, placed), and the slowest of those reads. */
  placedSteps: [number, number][];
  slowestRead: number;
  /** Nodes that got shards of the deployment in this change. */
  affected: number;
  /** Of those, how many agents had their new shards by the deadline, and their delivery times (ms from the PUT). */
  delivered: number;
  deliveryMs: number[];
  /** The same times by the instance whose answer brought the shards (its index). */
  deliveryVia: number[][];
  /** Until every affected agent's `ready` report was answered; then the states the API had stored for their shards. */
  reportedMs?: number;
  stored: Record<string, number>;
  /** Until the deployment's status said every placed replica ready (at most `deadlineMs`), and how many were. */
  readyMs?: number;
  ready: number;
};

const sleep = (ms: number) => new Promise<void>((ok) => setTimeout(ok, ms));

/** Collects the agents' deliveries: for each node, when each answer with a new shard set arrived. */
export function deliveryLog() {
  const byNode = new Map<string, Delivery[]>();
  return {
    add(items: Delivery[]) {
      for (const d of items) {
        const list = byNode.get(d.node);
        if (list) list.push(d);
        else byNode.set(d.node, [d]);
      }
    },
    /** The first `kind` event of `deployment` that `node` saw at or after `since`. */
    first(node: string, deployment: string, since: number, kind: Delivery["kind"] = "shards") {
      return byNode.get(node)?.find((d) => d.kind === kind && d.at >= since && d.deployments.includes(deployment));
    },
  };
}

/** The shards of `deployment`'s replicas now, with their stored states. */
async function shardsOf(api: Api, deployment: string): Promise<{ nodeId: string; state: string }[]> {
  const r = await api("GET", `/api/v1/replicas?deployment=${deployment}`);
  if (r.status !== 200) throw new Error(`GET /api/v1/replicas: ${r.status} ${JSON.stringify(r.body)}`);
  return (r.body.items as { shards: { nodeId: string; state: string }[] }[]).flatMap((x) => x.shards);
}

/** Reads the deployment's status until `done` says so, nothing moved for `stallMs` or `end`; ms since `t0`. */
async function watchStatus(
  api: Api,
  deployment: string,
  t0: number,
  done: (s: { desired: number; placed: number; ready: number }) => boolean,
  stallMs: number,
  end = Number.POSITIVE_INFINITY,
) {
  let last = "";
  let moved = Date.now();
  // when the placed count changed (ms since t0, placed), and the slowest read of the status
  const steps: [number, number][] = [];
  let slowest = 0;
  for (;;) {
    const asked = Date.now();
    const r = await api("GET", `/api/v1/deployments/${deployment}`);
    slowest = Math.max(slowest, Date.now() - asked);
    const s = r.body?.status as { desired: number; placed: number; ready: number } | undefined;
    if (s && s.placed !== steps.at(-1)?.[1]) steps.push([Date.now() - t0, s.placed]);
    if (s && done(s)) return { ms: Date.now() - t0, ...s, ok: true, steps, slowest };
    const now = JSON.stringify(s);
    if (now !== last) [last, moved] = [now, Date.now()];
    if (Date.now() - moved > stallMs || Date.now() > end)
      return { ms: Date.now() - t0, ...(s ?? { placed: 0 }), ok: false, steps, slowest };
    await sleep(250);
  }
}

/**
 * PUTs `deployment` with `replicas` of `model` and measures it; `before`: the nodes that held its shards already
 * (they are not affected). Waits at most `deadlineMs` for the deliveries.
 */
export async function measureChange(
  api: Api,
  log: ReturnType<typeof deliveryLog>,
  o: { deployment: string; model: string; replicas: number; before: Set<string>; deadlineMs: number },
): Promise<ChangeResult & { nodes: Set<string> }> {
  const t0 = Date.now();
  const put = await api("PUT", `/api/v1/deployments/${o.deployment}`, {
    spec: { model: o.model, replicas: o.replicas, pool: "prod" },
  });
  const putMs = Date.now() - t0;
  if (put.status !== 200 && put.status !== 201)
    throw new Error(`PUT deployment: ${put.status} ${JSON.stringify(put.body)}`);
  const placed = await watchStatus(api, o.deployment, t0, (s) => s.placed >= s.desired, 30_000);
  const nodes = new Set((await shardsOf(api, o.deployment)).map((s) => s.nodeId));
  const affected = [...nodes].filter((n) => !o.before.has(n));
  const end = t0 + o.deadlineMs;
  const seen = async (kind: Delivery["kind"]) => {
    for (;;) {
      const found = affected.map((n) => log.first(n, o.deployment, t0, kind));
      if (found.every((d) => d !== undefined) || Date.now() > end)
        return found
          .flatMap((d) => (d === undefined ? [] : [{ ms: d.at - t0, via: d.via }]))
          .sort((a, b) => a.ms - b.ms);
      await sleep(100);
    }
  };
  const delivered = await seen("shards");
  const deliveryMs = delivered.map((d) => d.ms);
  const deliveryVia: number[][] = [];
  for (const d of delivered) (deliveryVia[d.via] ??= []).push(d.ms);
  const reported = (await seen("ready")).map((d) => d.ms);
  // every affected agent's last report says ready and was answered: a shard stored otherwise was overwritten since
  const stored: Record<string, number> = {};
  const mine = new Set(affected);
  for (const s of await shardsOf(api, o.deployment))
    if (mine.has(s.nodeId)) stored[s.state] = (stored[s.state] ?? 0) + 1;
  const ready = await watchStatus(api, o.deployment, t0, (s) => s.ready >= s.placed, 30_000, end);
  return {
    putStatus: put.status,
    putMs,
    placedMs: placed.ms,
    placed: placed.placed,
    placedSteps: placed.steps,
    slowestRead: placed.slowest,
    affected: affected.length,
    delivered: deliveryMs.length,
    deliveryMs,
    deliveryVia,
    ...(reported.length === affected.length ? { reportedMs: reported.at(-1) ?? 0 } : {}),
    stored,
    ...(ready.ok ? { readyMs: ready.ms } : {}),
    ready: "ready" in ready ? ready.ready : 0,
    nodes,
  };
}
