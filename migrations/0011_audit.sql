ALTER TABLE `events` ADD `actor_id` text;--> statement-breakpoint
ALTER TABLE `events` ADD `actor_name` text;--> statement-breakpoint
ALTER TABLE `events` ADD `actor_role` text;--> statement-breakpoint
ALTER TABLE `events` ADD `kind` text;--> statement-breakpoint
ALTER TABLE `events` ADD `name` text;--> statement-breakpoint
CREATE INDEX `events_at` ON `events` (`at`);--> statement-breakpoint
CREATE INDEX `events_actor` ON `events` (`actor_id`,`id`);--> statement-breakpoint
CREATE INDEX `events_kind` ON `events` (`kind`,`id`);