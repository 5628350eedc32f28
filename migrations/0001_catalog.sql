CREATE TABLE `cluster` (
	`id` integer PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `deployments` (
	`name` text PRIMARY KEY NOT NULL,
	`model` text NOT NULL,
	`spec` text NOT NULL,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `deployments_model` ON `deployments` (`model`);--> statement-breakpoint
CREATE TABLE `models` (
	`name` text PRIMARY KEY NOT NULL,
	`spec` text NOT NULL,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
