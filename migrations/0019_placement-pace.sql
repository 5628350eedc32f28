ALTER TABLE `cluster` ADD `placed_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `cluster` ADD `place_ms` integer DEFAULT 0 NOT NULL;