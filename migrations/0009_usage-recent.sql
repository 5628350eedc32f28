CREATE TABLE `usage_recent` (
	`key_name` text NOT NULL,
	`model` text NOT NULL,
	`bucket_start` integer NOT NULL,
	`requests` integer NOT NULL,
	`errors` integer NOT NULL,
	`prompt_tokens` integer NOT NULL,
	`completion_tokens` integer NOT NULL,
	`ttft_0` integer DEFAULT 0 NOT NULL,
	`ttft_1` integer DEFAULT 0 NOT NULL,
	`ttft_2` integer DEFAULT 0 NOT NULL,
	`ttft_3` integer DEFAULT 0 NOT NULL,
	`ttft_4` integer DEFAULT 0 NOT NULL,
	`ttft_5` integer DEFAULT 0 NOT NULL,
	`ttft_6` integer DEFAULT 0 NOT NULL,
	`ttft_7` integer DEFAULT 0 NOT NULL,
	`ttft_8` integer DEFAULT 0 NOT NULL,
	`ttft_9` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`key_name`, `model`, `bucket_start`)
);
--> statement-breakpoint
CREATE INDEX `usage_recent_bucket` ON `usage_recent` (`bucket_start`);