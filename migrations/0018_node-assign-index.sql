CREATE TABLE `node_assign_index` (
	`node_id` text PRIMARY KEY NOT NULL,
	`assign_index` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `node_assign_index_index` ON `node_assign_index` (`assign_index`);--> statement-breakpoint
INSERT INTO `node_assign_index` (`node_id`, `assign_index`) SELECT `id`, `assign_index` FROM `nodes`;--> statement-breakpoint
DROP INDEX `nodes_assign_index`;--> statement-breakpoint
ALTER TABLE `nodes` DROP COLUMN `assign_index`;