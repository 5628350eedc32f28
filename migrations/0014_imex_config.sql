ALTER TABLE `nodes` ADD `imex_config_digest` text;--> statement-breakpoint
ALTER TABLE `nodes` ADD `imex_config_addresses` integer;