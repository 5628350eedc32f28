import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Timestamps are integer milliseconds since the epoch.

export const adminTokens = sqliteTable("admin_tokens", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  hash: text("hash").notNull().unique(),
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
    adminState: text("admin_state", { enum: ["ready", "cordoned", "draining"] }).notNull().default("ready"),
    portFirst: integer("port_first"),
    portLast: integer("port_last"),
    /** The inventory as registered, with heartbeat fields applied: returned as is, never queried. */
    inventory: text("inventory").notNull(),
    registeredAt: integer("registered_at").notNull(),
    lastHeartbeatAt: integer("last_heartbeat_at"),
    lastSeenAt: integer("last_seen_at").notNull(),
    /** Set by the liveness sweep when the node went silent; cleared when it is heard from again. */
    lostAt: integer("lost_at"),
  },
  (t) => [index("nodes_pool").on(t.pool), index("nodes_last_seen").on(t.lastSeenAt)],
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
    state: text("state", { enum: ["pending", "starting", "loading", "ready", "draining", "stopped", "failed"] }).notNull(),
    message: text("message"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.shardId] })],
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
  },
  (t) => [index("events_node").on(t.nodeId, t.id), index("events_type").on(t.type, t.id)],
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
  },
  (t) => [index("deployments_model").on(t.model)],
);

/** One row of cluster-wide counters: `generation` is bumped by every change that can alter placement. */
export const cluster = sqliteTable("cluster", {
  id: integer("id").primaryKey(),
  generation: integer("generation").notNull(),
});
