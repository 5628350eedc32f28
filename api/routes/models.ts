// /api/v1/models: what can run and how (engines, profiles, weights).
import { asc, eq } from "drizzle-orm";
import { Model, ModelSpec } from "../../shared/schemas/model.js";
import type { StoredResource } from "../db/resources.js";
import { models } from "../db/schema.js";
import { modelViews } from "../views/models.js";
import { type DeclaredKind, declarativeRoutes } from "./declarative.js";

const MODELS: DeclaredKind<StoredResource> = {
  kind: "model",
  list: (q) => q.select().from(models).orderBy(asc(models.name)),
  find: async (q, name) => (await q.select().from(models).where(eq(models.name, name)))[0],
  save: async (tx, next) => {
    await tx.insert(models).values(next).onConflictDoUpdate({ target: models.name, set: next });
    return next;
  },
  remove: async (tx, name) => {
    await tx.delete(models).where(eq(models.name, name));
  },
};

export const modelRoutes = declarativeRoutes({
  collection: "models",
  one: "Model",
  many: "Models",
  example: "llama-3.1-70b",
  Spec: ModelSpec,
  View: Model,
  table: MODELS,
  view: (q, rows) => modelViews(q, rows),
  docs: {
    list: "List models",
    get: "Read a model; `spec` is exactly as written",
    put: "Create or replace a model",
    remove: "Delete a model; deployments that name it stay, pending, until it is declared again",
  },
});
