import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { Assignments } from "../../shared/schemas/assignment.js";
import { NodeId } from "../../shared/schemas/common.js";
import { z } from "../../shared/z.js";
import { requireOwnNode, stateBehind } from "../auth.js";
import { type NodeAssignment, nodeAssignments } from "../db/shards.js";
import type { AppDeps, AppEnv } from "../deps.js";
import { pollHeard } from "../nodes/quick-writes.js";
import { errorResponses, jsonResponse, nodeSecurity, syncFirst } from "../openapi.js";
import { movedAny, placeSoon, placeTimed } from "../placement/trigger.js";
import { holdAnswer, outgoingOf } from "./held-poll.js";

const MAX_WAIT_S = 60;
/**
 * How stale a node's last-seen time may be before a poll refreshes it: a third of the time after which a silent node
 * is lost, at most a minute. Heartbeats refresh it as well, so at the default settings (lost after 180 s, a heartbeat
 * a minute, polls of 50 s) most polls write nothing, and a live node is never near the limit.
 */
const seenResolutionMs = (lostAfterS: number) => Math.min(60_000, (lostAfterS * 1000) / 3);

const poll = createRoute({
  method: "get",
  path: "/api/v1/agents/{node}/assignments",
  operationId: "pollAssignments",
  tags: ["agents"],
  summary: "Long-poll for the node's full desired shard set",
  description:
    "Runs placement if anything changed since it last ran. A long-poll (`index` and `wait` given) does not wait for that run: it answers at once " +
    "when `index` differs from the node's, else waits until the index moves or `wait` seconds pass (at most 60, jittered). " +
    "Without `wait` the poll answers after the run. " +
    "The reply is always the full set, so a timeout reply is harmless. " +
    "An `index` above the node's own (the database restored from an older backup, or the node registered anew) is answered 409 `state_behind`: " +
    "the agent registers again with its running engines, which placement can then adopt.",
  security: nodeSecurity,
  middleware: requireOwnNode,
  request: {
    // every poll validates these: parsed synchronously first, like request bodies (api/openapi.ts)
    params: syncFirst(z.object({ node: NodeId.openapi({ param: { name: "node", in: "path" } }) })),
    query: syncFirst(
      z.object({
        index: z.coerce
          .number()
          .int()
          .min(0)
          .optional()
          .openapi({
            param: { name: "index", in: "query" },
            description: "the last X-Llmgw-Index seen (0 or absent: answer at once)",
          }),
        wait: z.coerce
          .number()
          .min(0)
          .max(3600)
          .optional()
          .openapi({
            param: { name: "wait", in: "query" },
            description: "seconds to wait for a change (capped at 60)",
          }),
      }),
    ),
  },
  responses: {
    200: {
      ...jsonResponse(Assignments, "The node's desired shards"),
      headers: { "X-Llmgw-Index": { schema: { type: "integer" }, description: "the node's assignment index" } },
    },
    ...errorResponses(400, 401, 403, 409),
  },
});

export const assignmentRoutes = new OpenAPIHono<AppEnv>().openapi(poll, async (c) => {
  const { node } = c.req.valid("param");
  const { index, wait } = c.req.valid("query");
  const { store, now, settings, waiter } = c.var.deps;
  const t = now();
  const row = c.var.node;
  // statements batched with other agents' writes: a fleet whose polls all come back at once (every instance
  // restarted, the database back after an outage, even one past the lost-after time) writes no transaction per node
  if (row.lostAt !== null || t - row.lastSeenAt > seenResolutionMs(settings.nodeLostAfterS))
    await pollHeard(store, row, t, settings.nodeLostAfterS);
  // A long-poll (an agent's: `index` and `wait` given) has placement run beside it rather than first: it answers at
  // once when its index is behind the node's, or parks, and what the run changes for its node wakes it as any other
  // commit does (the poll hub). Waiting for the run first held such polls through the run going on and the one queued
  // after it, paced — seconds at fleet size — and the ones that then parked had the index read before both, so a
  // change committed meanwhile reached them only at the hub's next look. A plain read (no `wait`) places first, so
  // that its answer has what this run places.
  const longPoll = index !== undefined && !!wait;
  if (longPoll) placeBeside(c);
  const placed = longPoll ? undefined : await placeTimed(c.var.deps, t);
  if (placed && movedAny(placed)) waiter.notify();
  const parks = longPoll && index === row.assignIndex;
  // An answer reads the index afresh with the shards, so that the two agree; a waiting poll's shards are read once,
  // for its answer
  let current = parks ? undefined : await nodeAssignments(store, node);
  if (longPoll && (current === undefined || index === current.index)) {
    const ms = Math.min(wait, MAX_WAIT_S) * 1000 * (0.9 + 0.1 * Math.random());
    const after = afterWait(c.var.deps, node, index, ms);
    const out = outgoingOf(c.env);
    if (out) {
      // Node: the poll waits outside the request chain (held-poll.ts), which is let go meanwhile
      const held = holdAnswer(out, c.var.requestId, c.var.deps.log, async (gone) => {
        const a = await after(gone);
        return { status: 200, headers: { "x-llmgw-index": String(a.index) }, json: a };
      });
      c.set("held", held.answered);
      return held.response as never;
    }
    current = await after(c.req.raw.signal);
  }
  current = checked(node, index, current!);
  c.header("x-llmgw-index", String(current.index));
  return c.json(current, 200);
});

/**
 * Starts placement beside a long-poll: in the background on Node, kept alive by `waitUntil` on Workers. A function of
 * its own, so that no closure of the handler holds the request's Context: one that did kept it, through the closure
 * of the held answer, for the whole wait (~4 KiB a poll, ~40 MiB of heap at 10,000 agents).
 */
function placeBeside(c: Context<AppEnv>) {
  placeSoon(c.var.deps, (work) => c.executionCtx.waitUntil(work), "a poll");
}

/** The answer to a poll that saw `index`: a state_behind error if the database was replaced by an older one. */
function checked(node: string, index: number | undefined, current: NodeAssignment): NodeAssignment {
  if (index !== undefined && current.index < index) throw stateBehind(node, index, current.index);
  return current;
}

/**
 * What a poll that saw `index` answers after waiting up to `ms` for its node's index to move: its shards as they are
 * then (not read when the client has gone). A function of its own, so that what a held poll keeps while it waits is
 * these few values, not the request's Context.
 */
function afterWait(deps: Pick<AppDeps, "store" | "waiter">, node: string, index: number, ms: number) {
  return async (gone?: AbortSignal): Promise<NodeAssignment> => {
    const read = await deps.waiter.wait(node, index, ms, gone);
    if (gone?.aborted) return { index, shards: [] };
    return checked(node, index, read ?? (await nodeAssignments(deps.store, node)));
  };
}
