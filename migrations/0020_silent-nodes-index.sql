DROP INDEX `nodes_last_seen`;--> statement-breakpoint
CREATE INDEX `nodes_last_seen_id` ON `nodes` (`last_seen_at`,`id`);