// A model as the API shows it: its spec as written and the deployments that name it.
import { asc } from "drizzle-orm";
import type { ModelSpec } from "../../shared/schemas/model.js";
import type { Q } from "../db/client.js";
import { metadataOf, type StoredResource } from "../db/resources.js";
import { deployments } from "../db/schema.js";

/** Models with the deployments that name them. */
export async function modelViews(q: Q, rows: StoredResource[]) {
  const uses = await q
    .select({ name: deployments.name, model: deployments.model })
    .from(deployments)
    .orderBy(asc(deployments.name));
  return rows.map((r) => ({
    name: r.name,
    spec: JSON.parse(r.spec) as ModelSpec,
    status: { deployments: uses.filter((u) => u.model === r.name).map((u) => u.name) },
    metadata: metadataOf(r),
  }));
}
