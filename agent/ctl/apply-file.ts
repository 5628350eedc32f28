// `llmgw ctl apply -f`: the file read into documents, and what a PUT did. Pure.
import { parseAllDocuments } from "yaml";
import { ResourceName } from "../../shared/schemas/model.js";
import { z } from "../../shared/z.js";
import { UsageError } from "./errors.js";

/**
 * One object to apply. Only this envelope is checked here; `spec` goes to the API as written, so the server that
 * stores it is the one that judges it (a ctl older or newer than the server neither refuses nor lets through a field).
 */
export const ApplyDoc = z.strictObject({
  kind: z.enum(["Model", "Deployment", "ApiKey"]),
  name: ResourceName,
  spec: z.record(z.string(), z.unknown()),
});
export type ApplyDoc = z.infer<typeof ApplyDoc>;

/** `kind/name` as the output names an object. */
export const refOf = (d: Pick<ApplyDoc, "kind" | "name">) => `${d.kind.toLowerCase()}/${d.name}`;

/**
 * The objects of a YAML or JSON file, in order: each document is one object or a list of them; YAML documents are
 * separated by `---`; empty documents are skipped. Throws a UsageError naming the document, item and field.
 */
export function parseApplyFile(text: string, source: string): ApplyDoc[] {
  const docs = parseAllDocuments(text, { prettyErrors: true });
  const out: ApplyDoc[] = [];
  const many = docs.length > 1;
  docs.forEach((doc, d) => {
    const where = many ? `${source}, document ${d + 1}` : source;
    const err = doc.errors[0];
    if (err) throw new UsageError(`${where}: not YAML or JSON: ${err.message.split("\n")[0]}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const items = Array.isArray(value) ? value : [value];
    items.forEach((item, i) => {
      const at = Array.isArray(value) ? `${where}, item ${i + 1}` : where;
      const r = ApplyDoc.safeParse(item);
      if (!r.success) {
        const problems = r.error.issues.flatMap((is) =>
          is.code === "unrecognized_keys"
            ? is.keys.map((k) => `${k}: unknown field (an object is {kind, name, spec})`)
            : [`${is.path.join(".") || "(object)"}: ${is.message}`],
        );
        throw new UsageError(`${at}: ${problems.join("; ")}`);
      }
      out.push(r.data);
    });
  });
  if (!out.length)
    throw new UsageError(
      `${source}: no objects to apply (expected {kind, name, spec}, a list of them, or YAML documents)`,
    );
  const seen = new Set<string>();
  for (const o of out) {
    if (seen.has(refOf(o))) throw new UsageError(`${source}: ${refOf(o)} appears twice`);
    seen.add(refOf(o));
  }
  return out;
}

export type Outcome = "created" | "updated" | "unchanged";

/** What a PUT did: 201 created; otherwise updated when the stored version moved from the one read before. */
export function outcomeOf(status: number, versionBefore: number | undefined, versionAfter: number): Outcome {
  if (status === 201) return "created";
  return versionBefore === versionAfter ? "unchanged" : "updated";
}
