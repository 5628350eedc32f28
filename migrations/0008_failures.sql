ALTER TABLE `deployments` ADD `failing` text;--> statement-breakpoint
ALTER TABLE `shard_status` ADD `failure` text;