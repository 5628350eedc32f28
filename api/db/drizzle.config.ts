import { defineConfig } from "drizzle-kit";

// `npm run db:generate -- --name <change>` writes a new migration into migrations/.
export default defineConfig({
  dialect: "turso",
  schema: "./api/db/schema.ts",
  out: "./migrations",
  dbCredentials: { url: "file:./data/drizzle-kit.db" },
});
