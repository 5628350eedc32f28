// bench/fleet.ts --preseed: the fleet's nodes written straight into the database before serve starts (as
// bench/placement.ts writes its fleet), each with a token its agent derives, so that the steady phase and the changes
// can be measured at a size that registering through the API does not reach in a run's time.
import { bumpGeneration } from "../api/db/cluster.js";
import { upsertNode } from "../api/db/nodes.js";
import { isFileDb, openDb } from "../api/db/open.js";
import { hashSecret } from "../api/db/secrets.js";
import { applyMigrations } from "../api/node.js";
import { RegisterRequest } from "../shared/schemas/agent.js";
import { inventoryOf, registrationOf, seededToken } from "./fleet-inventory.js";

const CHUNK = 500;

/**
 * Writes nodes 0 … agents - 1 (migrating a file database first), last heard from `seenAgoS` seconds before it ends;
 * resolves with the seconds it took.
 */
export async function seedNodes(dbUrl: string, agents: number, seenAgoS = 0): Promise<number> {
  const t0 = performance.now();
  const { client, db, store } = await openDb(dbUrl);
  try {
    if (isFileDb(dbUrl)) await applyMigrations(db);
    for (let first = 0; first < agents; first += CHUNK) {
      const ids = Array.from({ length: Math.min(CHUNK, agents - first) }, (_, k) => first + k);
      const rows = await Promise.all(
        ids.map(async (i) => ({
          req: RegisterRequest.parse(registrationOf(i, inventoryOf(i))),
          hash: await hashSecret(seededToken(i)),
        })),
      );
      await store.write(async (tx) => {
        for (const r of rows) await upsertNode(tx, r.req, r.hash, Date.now());
        await bumpGeneration(tx);
      });
    }
    if (seenAgoS) {
      const at = Date.now() - seenAgoS * 1000;
      await client.execute({ sql: "update nodes set last_seen_at = ?, last_heartbeat_at = ?", args: [at, at] });
    }
  } finally {
    client.close();
  }
  return (performance.now() - t0) / 1000;
}
