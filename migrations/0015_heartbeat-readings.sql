ALTER TABLE `nodes` ADD `readings` text;--> statement-breakpoint
ALTER TABLE `nodes` ADD `heartbeat_digest` text;