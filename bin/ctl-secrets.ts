// `llmgw ctl tokens …` and `llmgw ctl keys …`: admin and join tokens, API keys. New secrets are printed alone on
// stdout, the note about them on stderr.
import { commaList, durationS, positiveInt } from "../agent/ctl/args.js";
import { CtlError, UsageError } from "../agent/ctl/errors.js";
import { formatAdminTokens, formatApiKeys, secretOutput } from "../agent/ctl/format-resources.js";
import { Role } from "../shared/schemas/token.js";
import type { CtlFlags, CtlHelpers, JoinFlags, KeyFlags, TokenFlags } from "./ctl-io.js";

/** `--role` checked here, so a typo is a usage error before any request. */
function role(v: string | undefined) {
  if (v === undefined) return undefined;
  const r = Role.safeParse(v);
  if (!r.success) throw new UsageError(`--role: expected admin, operator or viewer, got ${JSON.stringify(v)}`);
  return r.data;
}

/** The token and key commands; each returns its exit code. */
export function secretCommands(h: CtlHelpers) {
  const { out, err, json, run } = h;
  return {
    /** `tokens [list]`: admin tokens. */
    tokens: (f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.listAdminTokens();
        f.json ? json(a.raw) : out(formatAdminTokens(a.data.items, Date.now()));
      }),

    /** `tokens create NAME [--role R]`: a new admin token, printed once. */
    tokenCreate: (name: string, f: TokenFlags) =>
      run(f, async (c) => {
        const a = await c.createAdminToken(name, role(f.role));
        if (f.json) return void json(a.raw);
        const s = secretOutput(`${a.data.role} token ${a.data.name} (${a.data.id}) created`, a.data.token);
        out(s.stdout);
        err(s.stderr);
      }),

    /** `tokens join`: a new join token for agents, printed once. */
    tokenJoin: (f: JoinFlags) =>
      run(f, async (c) => {
        const req = {
          ...(f.name ? { name: f.name } : {}),
          ...(f.maxUses !== undefined ? { maxUses: positiveInt(f.maxUses, "--max-uses") } : {}),
          ...(f.expiresIn !== undefined ? { expiresInS: durationS(f.expiresIn, "--expires-in") } : {}),
        };
        const a = await c.createJoinToken(req);
        if (f.json) return void json(a.raw);
        const t = a.data;
        const limits = [
          t.maxUses === null ? "unlimited uses" : `${t.maxUses} use(s)`,
          t.expiresAt === null ? "no expiry" : `expires ${new Date(t.expiresAt).toISOString()}`,
        ];
        const s = secretOutput(
          `join token ${t.name ?? ""}${t.name ? " " : ""}(${t.id}) created: ${limits.join(", ")}`,
          t.token,
        );
        out(s.stdout);
        err(s.stderr);
      }),

    /** `tokens revoke ID`: an admin token (`tok_…`) or a join token (`join_…`). */
    tokenRevoke: (id: string, f: CtlFlags) =>
      run(f, async (c) => {
        const isJoin = id.startsWith("join_");
        await (isJoin ? c.deleteJoinToken(id) : c.deleteAdminToken(id));
        f.json
          ? json({ kind: isJoin ? "join-tokens" : "tokens", name: id, deleted: true })
          : out(`${isJoin ? "join" : "admin"} token ${id} revoked\n`);
      }),

    /** `keys [list]`: API keys. */
    keys: (f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.listDeclared("ApiKey");
        f.json ? json(a.raw) : out(formatApiKeys(a.data.items, Date.now()));
      }),

    /** `keys create NAME`: a new API key (never replaces one), its secret printed once. */
    keyCreate: (name: string, f: KeyFlags) =>
      run(f, async (c) => {
        const spec = {
          ...(f.models !== undefined ? { models: commaList(f.models) } : {}),
          ...(f.rpm !== undefined ? { requestsPerMinute: positiveInt(f.rpm, "--rpm") } : {}),
          ...(f.tpm !== undefined ? { tokensPerMinute: positiveInt(f.tpm, "--tpm") } : {}),
          ...(f.expiresIn !== undefined
            ? { expiresAt: Date.now() + durationS(f.expiresIn, "--expires-in") * 1000 }
            : {}),
        };
        const a = await c.putDeclared("ApiKey", name, spec, { "if-none-match": "*" });
        if (f.json) return void json(a.raw);
        const secret = a.data.secret;
        if (!secret)
          throw new CtlError(
            a.status,
            `the server created API key ${name} without showing its secret; run \`llmgw ctl keys rotate ${name}\``,
          );
        const s = secretOutput(`API key ${name} created`, secret);
        out(s.stdout);
        err(s.stderr);
      }),

    /** `keys rotate NAME`: a new secret, printed once; the old one stops working. */
    keyRotate: (name: string, f: CtlFlags) =>
      run(f, async (c) => {
        const a = await c.rotateApiKey(name);
        if (f.json) return void json(a.raw);
        const s = secretOutput(`API key ${name} has a new secret; the old one no longer works`, a.data.secret);
        out(s.stdout);
        err(s.stderr);
      }),

    /** `keys delete NAME`. */
    keyDelete: (name: string, f: CtlFlags) =>
      run(f, async (c) => {
        await c.deleteDeclared("ApiKey", name);
        f.json ? json({ kind: "api-keys", name, deleted: true }) : out(`API key ${name} deleted\n`);
      }),
  };
}
