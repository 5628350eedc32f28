// The migrations this build expects, from drizzle-kit's journal (a JSON import both entries can bundle).
import journal from "../../migrations/meta/_journal.json" with { type: "json" };
import type { MigrationInfo } from "../deps.js";

export const expectedMigrations: MigrationInfo = {
  expected: journal.entries.map((e) => ({ tag: e.tag, when: e.when })),
};
