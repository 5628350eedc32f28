CREATE TABLE `allocations` (
	`node_id` text NOT NULL,
	`device_id` integer NOT NULL,
	`shard_id` text NOT NULL,
	PRIMARY KEY(`node_id`, `device_id`)
);
--> statement-breakpoint
CREATE INDEX `allocations_shard` ON `allocations` (`shard_id`);--> statement-breakpoint
CREATE TABLE `port_allocations` (
	`node_id` text NOT NULL,
	`port` integer NOT NULL,
	`shard_id` text NOT NULL,
	PRIMARY KEY(`node_id`, `port`)
);
--> statement-breakpoint
CREATE INDEX `port_allocations_shard` ON `port_allocations` (`shard_id`);--> statement-breakpoint
CREATE TABLE `replicas` (
	`id` text PRIMARY KEY NOT NULL,
	`deployment` text NOT NULL,
	`profile` text NOT NULL,
	`fingerprint` text NOT NULL,
	`seq` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `replicas_deployment` ON `replicas` (`deployment`);--> statement-breakpoint
CREATE TABLE `shards` (
	`id` text PRIMARY KEY NOT NULL,
	`replica_id` text NOT NULL,
	`node_id` text NOT NULL,
	`rank` integer NOT NULL,
	`spec` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `shards_node` ON `shards` (`node_id`);--> statement-breakpoint
CREATE INDEX `shards_replica` ON `shards` (`replica_id`);--> statement-breakpoint
ALTER TABLE `cluster` ADD `placed_generation` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `cluster` ADD `next_seq` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `cluster` ADD `assign_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `deployments` ADD `pending` text;--> statement-breakpoint
ALTER TABLE `nodes` ADD `assign_index` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `nodes_assign_index` ON `nodes` (`assign_index`);