CREATE TABLE `admin_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `admin_tokens_hash_unique` ON `admin_tokens` (`hash`);--> statement-breakpoint
CREATE TABLE `devices` (
	`node_id` text NOT NULL,
	`device_id` integer NOT NULL,
	`label` text NOT NULL,
	`class` text NOT NULL,
	`uuid` text NOT NULL,
	`card` integer NOT NULL,
	`mig_index` integer,
	`memory_total_mib` integer NOT NULL,
	PRIMARY KEY(`node_id`, `device_id`),
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `devices_class` ON `devices` (`class`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`type` text NOT NULL,
	`node_id` text,
	`message` text NOT NULL,
	`data` text
);
--> statement-breakpoint
CREATE INDEX `events_node` ON `events` (`node_id`,`id`);--> statement-breakpoint
CREATE INDEX `events_type` ON `events` (`type`,`id`);--> statement-breakpoint
CREATE TABLE `join_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text,
	`hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`max_uses` integer,
	`uses` integer DEFAULT 0 NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `join_tokens_hash_unique` ON `join_tokens` (`hash`);--> statement-breakpoint
CREATE TABLE `nodes` (
	`id` text PRIMARY KEY NOT NULL,
	`hostname` text NOT NULL,
	`mgmt_addr` text NOT NULL,
	`mgmt_interface` text,
	`pool` text NOT NULL,
	`labels` text NOT NULL,
	`agent_version` text NOT NULL,
	`token_hash` text NOT NULL,
	`admin_state` text DEFAULT 'ready' NOT NULL,
	`port_first` integer,
	`port_last` integer,
	`inventory` text NOT NULL,
	`registered_at` integer NOT NULL,
	`last_heartbeat_at` integer,
	`last_seen_at` integer NOT NULL,
	`lost_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `nodes_token_hash_unique` ON `nodes` (`token_hash`);--> statement-breakpoint
CREATE INDEX `nodes_pool` ON `nodes` (`pool`);--> statement-breakpoint
CREATE INDEX `nodes_last_seen` ON `nodes` (`last_seen_at`);--> statement-breakpoint
CREATE TABLE `shard_status` (
	`node_id` text NOT NULL,
	`shard_id` text NOT NULL,
	`replica_id` text,
	`state` text NOT NULL,
	`message` text,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`node_id`, `shard_id`),
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
