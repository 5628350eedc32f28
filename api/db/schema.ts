import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { Failing, ShardFailure } from "../../shared/schemas/failure.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";

// Timestamps are integer milliseconds since the epoch.

export const adminTokens = sqliteTable("admin_tokens", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  hash: text("hash").notNull().unique(),
  /** What the token may do (api/roles.ts); tokens from before roles are admin. */
  role: text("role", { enum: ["admin", "operator", "viewer"] })
    .notNull()
    .default("admin"),
  createdAt: integer("created_at").notNull(),
  lastUsedAt: integer("last_used_at"),
});

export const joinTokens = sqliteTable("join_tokens", {
  id: text("id").primaryKey(),
  name: text("name"),
  hash: text("hash").notNull().unique(),
  createdAt: integer("created_at").notNull(),
  expiresAt: integer("expires_at"),
  maxUses: integer("max_uses"),
  uses: integer("uses").notNull().default(0),
  revokedAt: integer("revoked_at"),
});

export const nodes = sqliteTable(
  "nodes",
  {
    id: text("id").primaryKey(),
    hostname: text("hostname").notNull(),
    mgmtAddr: text("mgmt_addr").notNull(),
    mgmtInterface: text("mgmt_interface"),
    pool: text("pool").notNull(),
    labels: text("labels", { mode: "json" }).$type<Record<string, string>>().notNull(),
    agentVersion: text("agent_version").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    adminState: text("admin_state", { enum: ["ready", "cordoned", "draining"] })
      .notNull()
      .default("ready"),
    portFirst: integer("port_first"),
    portLast: integer("port_last"),
    /** The inventory as registered, with heartbeat fields applied: returned as is, never queried. */
    inventory: text("inventory").notNull(),
    /** Bumped by every write of `inventory`, so that readers can keep what they derived from an unchanged one. */
    inventoryVersion: integer("inventory_version").notNull().default(0),
    registeredAt: integer("registered_at").notNull(),
    lastHeartbeatAt: integer("last_heartbeat_at"),
    lastSeenAt: integer("last_seen_at").notNull(),
    /** Set by the liveness sweep when the node went silent; cleared when it is heard from again. */
    lostAt: integer("lost_at"),
    /**
     * The multi-node NVLink domain the node was last seen in: the rack view keeps it there, out, while a fabric
     * manager restart blanks its cards' cluster UUID, until it joins another domain or the node is forgotten.
     */
    lastDomain: text("last_domain"),
    /**
     * The summary of the node's IMEX peer list (nodes_config.cfg) from its last heartbeat: the digest of its sorted
     * addresses (shared/imex-config.ts) and how many it lists; null while the node sends none. Shown, never placed on:
     * writing it stamps no `rev` and bumps no generation.
     */
    imexConfigDigest: text("imex_config_digest"),
    imexConfigAddresses: integer("imex_config_addresses"),
    /**
     * The readings of the heartbeats since the inventory was last written (api/db/readings.ts: memory in use and
     * utilization of each card and MIG instance, each card's temperature, power draw and processes, memory
     * available), JSON, or null: a heartbeat that reports nothing else new writes only these. `readInventory` lays
     * them over `inventory`.
     */
    readings: text("readings"),
    /**
     * SHA-256 of the facts of the last heartbeat applied, or after a registration of the one its inventory implies
     * (readings.ts); a heartbeat with the same digest leaves `inventory` alone.
     */
    heartbeatDigest: text("heartbeat_digest"),
    /**
     * Placement's change index: set to the cluster generation + 1 (api/db/cluster.ts `nextRev`) by every write of what
     * placement reads of the node (registration, admin state, facts a heartbeat changed), so that placement re-reads
     * only the rows that changed since the generation it last read at.
     */
    rev: integer("rev").notNull().default(0),
  },
  (t) => [
    index("nodes_pool").on(t.pool),
    index("nodes_rev").on(t.rev),
    index("nodes_last_seen_id").on(t.lastSeenAt, t.id),
  ],
);

/** Each node's long-poll index, bumped when its desired shards change (not in `nodes`: see docs/architecture.md). */
export const nodeAssignIndex = sqliteTable(
  "node_assign_index",
  {
    nodeId: text("node_id")
      .primaryKey()
      .references(() => nodes.id, { onDelete: "cascade" }),
    assignIndex: integer("assign_index").notNull().default(0),
  },
  (t) => [index("node_assign_index_index").on(t.assignIndex)],
);

/** What placement hands out, derived from the inventory at every registration. */
export const devices = sqliteTable(
  "devices",
  {
    nodeId: text("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    deviceId: integer("device_id").notNull(),
    label: text("label").notNull(),
    class: text("class").notNull(),
    uuid: text("uuid").notNull(),
    card: integer("card").notNull(),
    migIndex: integer("mig_index"),
    memoryTotalMiB: integer("memory_total_mib").notNull(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.deviceId] }), index("devices_class").on(t.class)],
);

export const shardStatus = sqliteTable(
  "shard_status",
  {
    nodeId: text("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    shardId: text("shard_id").notNull(),
    replicaId: text("replica_id"),
    state: text("state", {
      enum: ["pending", "starting", "loading", "ready", "draining", "stopped", "failed"],
    }).notNull(),
    message: text("message"),
    updatedAt: integer("updated_at").notNull(),
    /**
     * When the node says the state was reached (a report's `at`, the node's clock): a report older than the one stored
     * changes nothing, so that reports crossing on their way (a heartbeat still saying `starting` applied after the
     * report of `ready`, through another instance) cannot step a shard back. Null: the report said no time.
     */
    reportedAt: integer("reported_at"),
    /** A reported engine's StartShard while no `shards` row names it: adopted or cleared (api/placement/adopt.ts). */
    spec: text("spec"),
    /** The last time its engine stopped unasked (shared/schemas/failure.ts), kept through later reports. */
    failure: text("failure", { mode: "json" }).$type<ShardFailure>(),
    /** What its NCCL reported using, judged against placement (shared/schemas/transport.ts); null: nothing said. */
    transport: text("transport", { mode: "json" }).$type<ShardTransport>(),
    /** Placement's change index, as `nodes.rev`: set by every report. */
    rev: integer("rev").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.shardId] }), index("shard_status_rev").on(t.rev)],
);

export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    type: text("type").notNull(),
    nodeId: text("node_id"),
    message: text("message").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>(),
    /** Who made the change (audit events): the admin token's id, name and role; null for the system's own events. */
    actorId: text("actor_id"),
    actorName: text("actor_name"),
    actorRole: text("actor_role"),
    /** What was changed (audit events): its kind (model, deployment, api_key, node, admin_token …) and name. */
    kind: text("kind"),
    name: text("name"),
  },
  (t) => [
    index("events_node").on(t.nodeId, t.id),
    index("events_type").on(t.type, t.id),
    index("events_at").on(t.at),
    index("events_actor").on(t.actorId, t.id),
    index("events_kind").on(t.kind, t.id),
  ],
);

/** Declared models: the spec as written (JSON text, returned as is) and its version. */
export const models = sqliteTable("models", {
  name: text("name").primaryKey(),
  spec: text("spec").notNull(),
  version: integer("version").notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** Declared deployments; `model` is the spec's model, kept as a column because placement and views query by it. */
export const deployments = sqliteTable(
  "deployments",
  {
    name: text("name").primaryKey(),
    model: text("model").notNull(),
    spec: text("spec").notNull(),
    version: integer("version").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Why replicas are not placed, as the last placement found: `[{count, reason}]`, shown in the status. */
    pending: text("pending", { mode: "json" }).$type<{ count: number; reason: string }[]>(),
    /** Failures past the restart limit in a row, none ready since: new replicas wait (api/placement/failing.ts). */
    failing: text("failing", { mode: "json" }).$type<Failing>(),
    /** Placement keeps replicas until new ones are ready (rolling): a ready report moves the generation. */
    awaitsReady: integer("awaits_ready", { mode: "boolean" }).notNull().default(true),
  },
  (t) => [index("deployments_model").on(t.model)],
);

/** One row of cluster-wide counters: `generation` is bumped by every change that can alter placement. */
export const cluster = sqliteTable("cluster", {
  id: integer("id").primaryKey(),
  generation: integer("generation").notNull(),
  /** The generation the last placement ran on: equal to `generation` means nothing to do. */
  placedGeneration: integer("placed_generation").notNull().default(0),
  /** The next replica sequence number (replica ids are `r<seq>`). */
  nextSeq: integer("next_seq").notNull().default(1),
  /** The last assignment index handed to a node. */
  assignSeq: integer("assign_seq").notNull().default(0),
  /** When the last placement run that wrote began (ms, its instance's clock) and how long it took (placement/pace.ts). */
  placedAt: integer("placed_at").notNull().default(0),
  placeMs: integer("place_ms").notNull().default(0),
});

/** Placed replicas of deployments. */
export const replicas = sqliteTable(
  "replicas",
  {
    id: text("id").primaryKey(),
    deployment: text("deployment").notNull(),
    profile: text("profile").notNull(),
    fingerprint: text("fingerprint").notNull(),
    seq: integer("seq").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("replicas_deployment").on(t.deployment)],
);

/** The shards of placed replicas, one per node; `spec` is what the agent is told to start. */
export const shards = sqliteTable(
  "shards",
  {
    id: text("id").primaryKey(),
    replicaId: text("replica_id").notNull(),
    nodeId: text("node_id").notNull(),
    rank: integer("rank").notNull(),
    spec: text("spec").notNull(),
  },
  (t) => [index("shards_node").on(t.nodeId), index("shards_replica").on(t.replicaId)],
);

/** Devices held by active shards: the primary key makes handing one device to two shards impossible. */
export const allocations = sqliteTable(
  "allocations",
  {
    nodeId: text("node_id").notNull(),
    deviceId: integer("device_id").notNull(),
    shardId: text("shard_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.deviceId] }), index("allocations_shard").on(t.shardId)],
);

/** Ports held by active shards, one owner per node and port. */
export const portAllocations = sqliteTable(
  "port_allocations",
  {
    nodeId: text("node_id").notNull(),
    port: integer("port").notNull(),
    shardId: text("shard_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.port] }), index("port_allocations_shard").on(t.shardId)],
);

/** Inference API keys: the spec as written (JSON text, returned as is), its version, the current secret's hash. */
export const apiKeys = sqliteTable("api_keys", {
  name: text("name").primaryKey(),
  spec: text("spec").notNull(),
  version: integer("version").notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
  /** SHA-256 of the current secret (`llmgw_key_…`); the router looks keys up by it. */
  hash: text("hash").notNull().unique(),
  /** When the current secret was made: at creation, then at every rotation. */
  secretIssuedAt: integer("secret_issued_at").notNull(),
});

/** Console sessions (/admin): the cookie's random secret, stored only as its hash, with the token that opened it. */
export const consoleSessions = sqliteTable(
  "console_sessions",
  {
    hash: text("hash").primaryKey(),
    tokenId: text("token_id").notNull(),
    /** The session's CSRF token, sent back in a hidden field of every console form. */
    csrf: text("csrf").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("console_sessions_expires").on(t.expiresAt)],
);

export * from "./schema-usage.js";
