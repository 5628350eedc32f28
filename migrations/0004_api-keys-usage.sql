CREATE TABLE `api_keys` (
	`name` text PRIMARY KEY NOT NULL,
	`spec` text NOT NULL,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`hash` text NOT NULL,
	`secret_issued_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE TABLE `usage` (
	`key_name` text NOT NULL,
	`model` text NOT NULL,
	`hour_start` integer NOT NULL,
	`requests` integer NOT NULL,
	`prompt_tokens` integer NOT NULL,
	`completion_tokens` integer NOT NULL,
	PRIMARY KEY(`key_name`, `model`, `hour_start`)
);
--> statement-breakpoint
CREATE INDEX `usage_hour` ON `usage` (`hour_start`);