// `llmgw ctl apply`: PUT each object in order, telling created, updated and unchanged apart by the stored version.
import { ApiCallError } from "../client.js";
import type { ApplyDoc, Outcome } from "./apply-file.js";
import { outcomeOf, refOf } from "./apply-file.js";
import type { CtlClient } from "./client.js";

export type Applied = { kind: ApplyDoc["kind"]; name: string; outcome: Outcome; object: unknown; secret?: string };
export type ApplyFailure = { kind: ApplyDoc["kind"]; name: string; ref: string; error: unknown };

/**
 * Applies the objects in file order: the stored version is read, then the spec PUT. Stops at the first failure
 * unless `keepGoing`; what was applied before it stays applied.
 */
export async function applyAll(
  client: CtlClient,
  docs: ApplyDoc[],
  o: { keepGoing: boolean; onApplied?: (a: Applied) => void; onFailed?: (f: ApplyFailure) => void },
): Promise<{ applied: Applied[]; failed: ApplyFailure[] }> {
  const applied: Applied[] = [];
  const failed: ApplyFailure[] = [];
  for (const doc of docs) {
    try {
      const before = await client.getDeclared(doc.kind, doc.name).then(
        (a) => a.data.metadata.version,
        (e: unknown) => {
          if (e instanceof ApiCallError && e.status === 404) return undefined;
          throw e;
        },
      );
      const put = await client.putDeclared(doc.kind, doc.name, doc.spec);
      const secret = put.data.secret;
      const a: Applied = {
        kind: doc.kind,
        name: doc.name,
        outcome: outcomeOf(put.status, before, put.data.metadata.version),
        object: put.raw,
        ...(secret ? { secret } : {}),
      };
      applied.push(a);
      o.onApplied?.(a);
    } catch (error) {
      const f = { kind: doc.kind, name: doc.name, ref: refOf(doc), error };
      failed.push(f);
      o.onFailed?.(f);
      if (!o.keepGoing) break;
    }
  }
  return { applied, failed };
}
