// `llmgw ctl`'s tables of declared resources and tokens, and the lines apply prints. Pure.
import type { ApiKey } from "../../shared/schemas/api-key.js";
import type { Deployment } from "../../shared/schemas/deployment.js";
import type { Model } from "../../shared/schemas/model.js";
import type { AdminToken, JoinToken } from "../../shared/schemas/token.js";
import type { z } from "../../shared/z.js";
import { type ApplyDoc, type Outcome, refOf } from "./apply-file.js";
import { ago, grid, text, when } from "./format.js";

type ModelT = z.infer<typeof Model>;
type DeploymentT = z.infer<typeof Deployment>;
type AdminTokenT = z.infer<typeof AdminToken>;
type JoinTokenT = z.infer<typeof JoinToken>;

/** `llmgw ctl get models`. */
export function formatModels(items: ModelT[]): string {
  const rows = items.map((m) => [
    m.name,
    m.spec.servedName ?? m.name,
    m.spec.profiles.map((p) => `${p.name} (${p.engine}, ${p.gpuClass})`).join(", "),
    String(m.metadata.version),
    m.status.deployments.join(", ") || "-",
  ]);
  return text(grid(["MODEL", "SERVED AS", "PROFILES", "VERSION", "DEPLOYMENTS"], rows, "no models"));
}

/** `llmgw ctl get deployments`. */
export function formatDeployments(items: DeploymentT[]): string {
  const rows = items.map((d) => [
    d.name,
    d.spec.model,
    d.spec.pool ?? "default",
    d.status.phase,
    `${d.status.ready}/${d.status.desired}`,
    String(d.metadata.version),
  ]);
  return text(grid(["DEPLOYMENT", "MODEL", "POOL", "PHASE", "READY", "VERSION"], rows, "no deployments"));
}

/** An expiry as `in 5h`, `expired 2d ago` or `never`. */
export function expiry(at: number | null | undefined, now: number): string {
  if (at === null || at === undefined) return "never";
  if (at <= now) return `expired ${ago(at, now)}`;
  return `in ${ago(now, at).replace(" ago", "")}`;
}

/** `llmgw ctl keys` and `get api-keys`. */
export function formatApiKeys(items: ApiKey[], now: number): string {
  const rows = items.map((k) => [
    k.name,
    k.spec.models === undefined ? "all" : k.spec.models.join(", ") || "none",
    k.spec.requestsPerMinute?.toString() ?? "-",
    k.spec.tokensPerMinute?.toString() ?? "-",
    expiry(k.spec.expiresAt, now),
    ago(k.status.secretIssuedAt, now),
    String(k.metadata.version),
  ]);
  return text(grid(["KEY", "MODELS", "RPM", "TPM", "EXPIRES", "SECRET ISSUED", "VERSION"], rows, "no API keys"));
}

/** `llmgw ctl tokens` and `get tokens`. */
export function formatAdminTokens(items: AdminTokenT[], now: number): string {
  return text(
    grid(
      ["ID", "NAME", "ROLE", "CREATED", "LAST USED"],
      items.map((t) => [t.id, t.name, t.role, when(t.createdAt), ago(t.lastUsedAt, now)]),
      "no admin tokens",
    ),
  );
}

/** `llmgw ctl get join-tokens`. */
export function formatJoinTokens(items: JoinTokenT[], now: number): string {
  const rows = items.map((t) => [
    t.id,
    t.name ?? "-",
    `${t.uses}${t.maxUses === null ? "" : `/${t.maxUses}`}`,
    expiry(t.expiresAt, now),
    t.usable ? "yes" : "no",
    when(t.createdAt),
  ]);
  return text(grid(["ID", "NAME", "USES", "EXPIRES", "USABLE", "CREATED"], rows, "no join tokens"));
}

/** What apply did to one object, a line; a created API key's secret is shown here, once. */
export function formatApplied(doc: Pick<ApplyDoc, "kind" | "name">, outcome: Outcome, secret?: string): string {
  return `${refOf(doc)} ${outcome}${secret ? `; its secret, shown once: ${secret}` : ""}\n`;
}

/** How a new secret is shown: the secret alone on stdout (so `$(llmgw ctl …)` captures it), the note on stderr. */
export function secretOutput(what: string, secret: string): { stdout: string; stderr: string } {
  return { stdout: `${secret}\n`, stderr: `${what}; keep the secret above, it is not shown again\n` };
}
