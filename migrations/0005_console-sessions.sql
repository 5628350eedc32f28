CREATE TABLE `console_sessions` (
	`hash` text PRIMARY KEY NOT NULL,
	`token_id` text NOT NULL,
	`csrf` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `console_sessions_expires` ON `console_sessions` (`expires_at`);