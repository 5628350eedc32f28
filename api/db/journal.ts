// The migrations this build expects, from drizzle-kit's journal (a JSON import both entries can bundle).
import journal from "../../migrations/meta/_journal.json" with { type: "json" };

/** Migration state the readiness probe compares with what the database has applied. */
export type MigrationInfo = { expected: { tag: string; when: number }[] };

export const expectedMigrations: MigrationInfo = {
  expected: journal.entries.map((e) => ({ tag: e.tag, when: e.when })),
};
