ALTER TABLE `nodes` ADD `rev` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `nodes_rev` ON `nodes` (`rev`);--> statement-breakpoint
ALTER TABLE `shard_status` ADD `rev` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `shard_status_rev` ON `shard_status` (`rev`);