import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { eq, sql } from "drizzle-orm";
import { homeDomain } from "../../shared/fabric.js";
import { AgentAck, Heartbeat, RegisterRequest, RegisterResponse, StatusReport } from "../../shared/schemas/agent.js";
import { NodeId } from "../../shared/schemas/common.js";
import type { Inventory, RunningShard } from "../../shared/schemas/inventory.js";
import { z } from "../../shared/z.js";
import { requireOwnNode, requireRegistrar, usableJoinToken } from "../auth.js";
import { runStatement, type Tx } from "../db/client.js";
import { bumpGeneration, bumpStatement, nextRev } from "../db/cluster.js";
import { insertEvents, type NewEvent } from "../db/events.js";
import { markHeard, writeBeat } from "../db/node-liveness.js";
import { findHeartbeatRow, findInventoryText, findNode, readInventory, upsertNode } from "../db/nodes.js";
import { factsDigest, readingsPatch } from "../db/readings.js";
import { joinTokens, nodes, shards } from "../db/schema.js";
import { hashSecret, newSecret } from "../db/secrets.js";
import { upsertShardReports } from "../db/shards.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { tryQuick } from "../nodes/beat-hints.js";
import { inventoryEvents } from "../nodes/events.js";
import { applyHeartbeat } from "../nodes/inventory-merge.js";
import { quickBeat, quickStatus, reportBump } from "../nodes/quick-writes.js";
import { heardFrom } from "../nodes/state.js";
import { errorResponses, jsonBody, jsonResponse, nodeSecurity, registerSecurity, syncFirst } from "../openapi.js";

const NodeParam = syncFirst(z.object({ node: NodeId.openapi({ param: { name: "node", in: "path" } }) }));

const register = createRoute({
  method: "post",
  path: "/api/v1/agents/register",
  operationId: "registerNode",
  tags: ["agents"],
  summary: "Register a node with its inventory (idempotent by node id)",
  description:
    "Authenticate with a join token to register a new node id, with the node's own token to re-register it, " +
    "or with an admin token to reset a node (its node token is replaced). A join token never takes over a registered node.",
  security: registerSecurity,
  middleware: [requireRegistrar] as const,
  request: { body: jsonBody(RegisterRequest) },
  responses: {
    200: jsonResponse(RegisterResponse, "Re-registered"),
    201: jsonResponse(RegisterResponse, "Registered a new node"),
    ...errorResponses(400, 401, 403, 409, 413, 415),
  },
});

const STATE_BEHIND =
  "An `X-Llmgw-Index` header above the node's assignment index (the database restored from an older backup, or the " +
  "node registered anew) is answered 409 `state_behind` with nothing written: the agent registers again first.";

const heartbeat = createRoute({
  method: "post",
  path: "/api/v1/agents/{node}/heartbeat",
  operationId: "postHeartbeat",
  tags: ["agents"],
  summary: "Report what changed on the node: fabric, IMEX, health, memory, ports, shard states",
  description: STATE_BEHIND,
  security: nodeSecurity,
  middleware: [requireOwnNode] as const,
  request: { params: NodeParam, body: jsonBody(Heartbeat) },
  responses: { 200: jsonResponse(AgentAck, "Stored"), ...errorResponses(400, 401, 403, 409, 413, 415) },
});

const status = createRoute({
  method: "post",
  path: "/api/v1/agents/{node}/status",
  operationId: "postShardStatus",
  tags: ["agents"],
  summary: "Report shard state transitions (batched)",
  description: STATE_BEHIND,
  security: nodeSecurity,
  middleware: [requireOwnNode] as const,
  request: { params: NodeParam, body: jsonBody(StatusReport) },
  responses: { 200: jsonResponse(AgentAck, "Stored"), ...errorResponses(400, 401, 403, 409, 413, 415) },
});

/** Spends one use of a join token inside the registration's transaction. */
async function spendJoinToken(tx: Tx, hash: string, now: number) {
  const jt = await usableJoinToken(tx, hash, now);
  await tx
    .update(joinTokens)
    .set({ uses: jt.uses + 1 })
    .where(eq(joinTokens.id, jt.id));
}

/** The running shards as stored: each keeps its spec only when no shard row names it (placement may adopt it). */
async function withOrphanSpecs(tx: Tx, nodeId: string, running: RunningShard[]) {
  if (!running.some((r) => r.spec)) return running;
  const rows = await tx.select({ id: shards.id }).from(shards).where(eq(shards.nodeId, nodeId));
  const known = new Set(rows.map((r) => r.id));
  return running.map(({ spec, ...r }) => (spec && !known.has(r.shardId) ? { ...r, spec } : r));
}

/**
 * The fields a heartbeat changes that placement derives facts from (api/placement/input.ts nodeFacts): each card's
 * problems and fabric, each MIG instance's problems, the NICs' port states and IMEX — not memory in use, utilization,
 * temperature or power, which change at every heartbeat.
 */
const placementFacts = (inv: Inventory) =>
  JSON.stringify([
    inv.gpus.map((g) => [g.health.problems, g.fabric, g.mig?.instances.map((m) => m.problems ?? [])]),
    inv.hcas.map((h) => h.ports.map((p) => p.state)),
    inv.imex,
  ]);

/**
 * A heartbeat that says something new besides its readings: applied to the node's inventory (with the readings so far),
 * its digest kept, the node stamped for placement when what placement derives moved. 409 when it names GPUs the
 * inventory lacks. Returns the events to store (`back`, and what changed in the inventory) and whether it moved.
 */
async function applyToInventory(
  tx: Tx,
  row: NonNullable<Awaited<ReturnType<typeof findHeartbeatRow>>>,
  hb: Heartbeat,
  t: number,
  digest: string,
  back: NewEvent[],
): Promise<{ events: NewEvent[]; moved: boolean }> {
  const before = readInventory({ inventory: (await findInventoryText(tx, row.id))!, readings: row.readings });
  const known = new Set(before.gpus.map((g) => g.uuid));
  const unknown = (hb.gpus ?? []).filter((g) => !known.has(g.uuid)).map((g) => g.uuid);
  if (unknown.length) {
    throw new ApiError(
      409,
      "conflict",
      `the heartbeat names GPUs the registered inventory does not have (${unknown.join(", ")}); register again`,
    );
  }
  const after = applyHeartbeat(before, hb);
  const moved = placementFacts(before) !== placementFacts(after);
  await tx
    .update(nodes)
    .set({
      lastHeartbeatAt: t,
      lastSeenAt: t,
      lostAt: null,
      // what the node's IMEX peer list says, for the NVLink view to compare; placement never reads it
      imexConfigDigest: hb.imexConfig?.digest ?? null,
      imexConfigAddresses: hb.imexConfig?.addresses ?? null,
      inventory: JSON.stringify(after),
      inventoryVersion: sql`${nodes.inventoryVersion} + 1`,
      readings: null,
      heartbeatDigest: digest,
      lastDomain: homeDomain(after.gpus) ?? row.lastDomain,
      // placement re-reads the node only when what it derives changed, not at every heartbeat
      ...(moved ? { rev: nextRev } : {}),
    })
    .where(eq(nodes.id, row.id));
  return { events: [...back, ...inventoryEvents(row.id, before, after)], moved };
}

export const agentRoutes = new OpenAPIHono<AppEnv>()
  .openapi(register, async (c) => {
    const req = c.req.valid("json");
    const caller = c.var.principal;
    if (caller.kind === "node" && caller.nodeId !== req.nodeId) {
      throw new ApiError(403, "forbidden", `this node token belongs to node ${caller.nodeId}, not ${req.nodeId}`);
    }
    const { store, now, settings } = c.var.deps;
    const t = now();
    const { created, nodeToken, digest } = await store.write(async (tx) => {
      const existing = await findNode(tx, req.nodeId);
      if (caller.kind === "join") {
        if (existing) {
          throw new ApiError(
            409,
            "node_exists",
            `node ${req.nodeId} is already registered; re-register with its node token, or have an admin delete it first`,
          );
        }
        await spendJoinToken(tx, caller.hash, t);
      }
      const token = caller.kind === "node" ? caller.token : newSecret("node");
      const digest = await upsertNode(tx, req, await hashSecret(token), t, existing);
      await upsertShardReports(tx, req.nodeId, await withOrphanSpecs(tx, req.nodeId, req.runningShards ?? []), t);
      const gpus = req.inventory.gpus.length;
      const events: NewEvent[] = existing
        ? [
            {
              type: "node_reregistered",
              nodeId: req.nodeId,
              message: `${req.nodeId} registered again${caller.kind === "admin" ? " (admin reset: new node token)" : ""}`,
            },
            ...heardFrom(existing, t, settings.nodeLostAfterS),
            ...inventoryEvents(req.nodeId, readInventory(existing), req.inventory),
          ]
        : [
            {
              type: "node_registered",
              nodeId: req.nodeId,
              message: `${req.nodeId} registered with ${gpus} GPU${gpus === 1 ? "" : "s"} in pool ${req.labels?.pool ?? "default"}`,
              data: {
                gpus,
                classes: [...new Set(req.inventory.gpus.map((g) => g.class))].sort(),
                ...(homeDomain(req.inventory.gpus) ? { domain: homeDomain(req.inventory.gpus) } : {}),
              },
            },
          ];
      await insertEvents(tx, t, events);
      await bumpGeneration(tx);
      return { created: !existing, nodeToken: token, digest };
    });
    const body = {
      nodeId: req.nodeId,
      nodeToken,
      heartbeatIntervalS: settings.heartbeatIntervalS,
      pollWaitS: settings.pollWaitS,
      nodeLostAfterS: settings.nodeLostAfterS,
    };
    c.var.deps.beatHints?.registered(req.nodeId, digest);
    return created ? c.json(body, 201) : c.json(body, 200);
  })
  .openapi(heartbeat, async (c) => {
    const hb = c.req.valid("json");
    const { node } = c.req.valid("param");
    const { store, now, settings, beatHints } = c.var.deps;
    const t = now();
    const digest = await factsDigest(hb);
    if (
      tryQuick(beatHints, node, digest) &&
      (await quickBeat(store, c.var.node, hb, digest, t, settings.nodeLostAfterS))
    )
      return c.json({ nodeId: node, receivedAt: t, heartbeatIntervalS: settings.heartbeatIntervalS }, 200);
    await store.write(async (tx) => {
      const row = await findHeartbeatRow(tx, node);
      if (!row)
        throw new ApiError(401, "unauthorized", "unknown node token: the node may have been deleted; register again");
      const back = heardFrom(row, t, settings.nodeLostAfterS);
      let changed: { events: NewEvent[]; moved: boolean } = { events: back, moved: false };
      if (row.heartbeatDigest === digest) {
        // nothing new but the readings: the inventory stays as it is (placement and the views derive nothing from them)
        await writeBeat(tx, node, t, readingsPatch(hb), hb.imexConfig);
      } else changed = await applyToInventory(tx, row, hb, t, digest, back);
      await upsertShardReports(tx, node, hb.shards ?? [], t);
      await insertEvents(tx, t, changed.events);
      // fabric, IMEX, health or liveness changes can change what may be placed here
      if (changed.events.length || changed.moved) await bumpGeneration(tx);
    });
    beatHints?.saw(node, digest);
    return c.json({ nodeId: node, receivedAt: t, heartbeatIntervalS: settings.heartbeatIntervalS }, 200);
  })
  .openapi(status, async (c) => {
    const { shards } = c.req.valid("json");
    const { node } = c.req.valid("param");
    const { store, now, settings } = c.var.deps;
    const t = now();
    if (await quickStatus(store, c.var.node, shards, t, settings.nodeLostAfterS))
      return c.json({ nodeId: node, receivedAt: t, heartbeatIntervalS: settings.heartbeatIntervalS }, 200);
    await store.write(async (tx) => {
      const row = await findHeartbeatRow(tx, node);
      if (!row)
        throw new ApiError(401, "unauthorized", "unknown node token: the node may have been deleted; register again");
      await upsertShardReports(tx, node, shards, t);
      await markHeard(tx, node, t);
      const back = heardFrom(row, t, settings.nodeLostAfterS);
      await insertEvents(tx, t, back);
      // a node back from silence can change placement, as can the report itself
      const bump = back.length ? bumpStatement(tx) : reportBump(tx, shards);
      if (bump) await runStatement(tx, bump);
    });
    return c.json({ nodeId: node, receivedAt: t, heartbeatIntervalS: settings.heartbeatIntervalS }, 200);
  });
