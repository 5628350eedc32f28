// Which failures are the database's — unreachable, refusing us, out of space, locked, unopenable — rather than a bug
// or a bad request, and what to say about them. Pure: it reads the error objects libSQL, drizzle, fetch and node:fs
// throw (a DrizzleQueryError wrapping a LibsqlError wrapping a fetch TypeError wrapping the system error …).

/** What kind of database failure it is; `storage` kinds mean writes fail while reads may still work. */
export type DbFailureKind =
  | "refused"
  | "dns"
  | "timeout"
  | "unreachable"
  | "auth"
  | "server"
  | "closed"
  | "busy"
  | "full"
  | "readonly"
  | "io"
  | "cantopen"
  | "damaged";

/** A database failure as the API answers it: always 503 `unavailable`, with the cause in words. */
export type DbFailure = { status: 503; code: "unavailable"; kind: DbFailureKind; cause: string };

type Err = { name?: unknown; message?: unknown; code?: unknown; extendedCode?: unknown; status?: unknown } & object;

const STORAGE: ReadonlySet<DbFailureKind> = new Set(["full", "readonly", "io", "cantopen", "damaged"]);

/** True for the kinds that stop writes (a full disk, a read-only or broken file) rather than the connection. */
export const isStorageFailure = (kind: DbFailureKind) => STORAGE.has(kind);

const SYSTEM: Record<string, [DbFailureKind, string]> = {
  ECONNREFUSED: ["refused", "connection refused"],
  ENOTFOUND: ["dns", "DNS name not found"],
  EAI_AGAIN: ["dns", "DNS lookup failed (temporary)"],
  EAI_NONAME: ["dns", "DNS name not found"],
  ETIMEDOUT: ["timeout", "connection timed out"],
  UND_ERR_CONNECT_TIMEOUT: ["timeout", "connection timed out"],
  UND_ERR_HEADERS_TIMEOUT: ["timeout", "no answer in time"],
  ECONNRESET: ["unreachable", "connection reset"],
  EPIPE: ["unreachable", "connection closed"],
  UND_ERR_SOCKET: ["unreachable", "connection closed by the server"],
  ECONNABORTED: ["unreachable", "connection aborted"],
  EHOSTUNREACH: ["unreachable", "host unreachable"],
  ENETUNREACH: ["unreachable", "network unreachable"],
  CERT_HAS_EXPIRED: ["unreachable", "TLS certificate expired"],
  DEPTH_ZERO_SELF_SIGNED_CERT: ["unreachable", "TLS certificate not trusted"],
  SELF_SIGNED_CERT_IN_CHAIN: ["unreachable", "TLS certificate not trusted"],
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: ["unreachable", "TLS certificate not trusted"],
  ERR_TLS_CERT_ALTNAME_INVALID: ["unreachable", "TLS certificate does not name the host"],
};

// SQLite's primary result codes (extended ones, SQLITE_IOERR_WRITE …, start with them), as libSQL names them
const SQLITE: [prefix: string, DbFailureKind, string][] = [
  ["SQLITE_FULL", "full", "database or disk is full"],
  ["SQLITE_BUSY", "busy", "database is locked by another writer"],
  ["SQLITE_LOCKED", "busy", "database table is locked"],
  ["SQLITE_READONLY", "readonly", "database is read-only"],
  ["SQLITE_IOERR", "io", "disk I/O error"],
  ["SQLITE_CANTOPEN", "cantopen", "cannot open the database file"],
  ["SQLITE_NOTADB", "damaged", "the file is not a database"],
  ["SQLITE_CORRUPT", "damaged", "the database file is damaged"],
  ["SQLITE_PERM", "readonly", "no permission to write the database"],
];
// libSQL's local driver reports a file it cannot open with SQLite's numeric code only
const NUMERIC: Record<string, string> = { "13": "SQLITE_FULL", "14": "SQLITE_CANTOPEN", "26": "SQLITE_NOTADB" };
const FS: Record<string, DbFailureKind> = {
  ENOSPC: "full",
  EROFS: "readonly",
  EACCES: "cantopen",
  EPERM: "cantopen",
  ENOTDIR: "cantopen",
  EISDIR: "cantopen",
  ENOENT: "cantopen",
  EEXIST: "cantopen",
};

const str = (v: unknown) => (typeof v === "string" ? v : "");
const messageOf = (e: Err) => str(e.message).replace(/^[A-Z_]+: /, "");

/** `e` and everything under it: `cause` chains and AggregateError's `errors`, outermost first, bounded. */
export function chain(e: unknown): Err[] {
  const out: Err[] = [];
  const todo: unknown[] = [e];
  while (todo.length && out.length < 16) {
    const x = todo.shift();
    if (!x || typeof x !== "object" || out.includes(x as Err)) continue;
    out.push(x as Err);
    todo.push((x as { cause?: unknown }).cause);
    const many = (x as { errors?: unknown }).errors;
    if (Array.isArray(many)) todo.push(...many);
  }
  return out;
}

/** The code of the error a store gives a write it does not queue: too many wait already (api/db/client.ts). */
export const QUEUE_FULL = "LLMGW_WRITE_QUEUE_FULL";

const fail = (kind: DbFailureKind, cause: string): DbFailure => ({ status: 503, code: "unavailable", kind, cause });

/** The database failure behind `e`, or undefined when `e` is not one (a constraint, a bug, a bad request). */
export function dbFailure(e: unknown): DbFailure | undefined {
  const all = chain(e);
  for (const x of all) {
    const http = /HTTP status (\d{3})/.exec(str(x.message))?.[1];
    const status = x.name === "HttpServerError" && typeof x.status === "number" ? x.status : Number(http);
    if (status === 401 || status === 403)
      return fail(
        "auth",
        `authentication failed: the database server answered HTTP ${status} (check LLMGW_DB_AUTH_TOKEN)`,
      );
  }
  for (const x of all) {
    const known = SYSTEM[str(x.code)];
    if (known) return fail(known[0], `${known[1]} (${str(x.message)})`);
  }
  for (const x of all) {
    const code = str(x.extendedCode) || str(x.code);
    const known = SQLITE.find(([prefix]) => code.startsWith(prefix));
    if (known) return fail(known[1], `${messageOf(x) || known[2]} (${code})`);
  }
  for (const x of all) {
    const m = /Unable to open connection to local database (.*): (\d+)/.exec(str(x.message));
    if (!m) continue;
    const code = NUMERIC[m[2]!] ?? `SQLite error ${m[2]}`;
    const known = SQLITE.find(([prefix]) => code.startsWith(prefix));
    const what = known?.[1] === "cantopen" ? "cannot open the database file" : (known?.[2] ?? "cannot open");
    return fail(known?.[1] ?? "cantopen", `${what} ${m[1]} (${code}: a missing directory, or no permission?)`);
  }
  for (const x of all) {
    const kind = FS[str(x.code)];
    if (!kind || !("path" in x)) continue;
    const mkdir = (x as { syscall?: unknown }).syscall === "mkdir";
    return fail(
      kind,
      `${mkdir ? "cannot create the database's directory" : "cannot use the database file"} (${str(x.message)})`,
    );
  }
  for (const x of all) {
    const code = str(x.code);
    if (code === "CLIENT_CLOSED") return fail("closed", "the database connection is closed");
    if (code === QUEUE_FULL) return fail("busy", str(x.message));
    // sqld ends a transaction that holds the write lock over 5 s while another connection waits for it
    if (code === "TRANSACTION_TIMEOUT")
      return fail(
        "busy",
        "the database server ended a transaction that held its write lock too long (TRANSACTION_TIMEOUT)",
      );
    if (code === "SERVER_ERROR" || code.startsWith("HRANA_"))
      return fail(code === "SERVER_ERROR" ? "server" : "unreachable", messageOf(x) || code);
    const system = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH|ENETUNREACH)\b/.exec(
      str(x.message),
    );
    if (system) return fail(SYSTEM[system[1]!]![0], `${SYSTEM[system[1]!]![1]} (${str(x.message)})`);
    if (x.name === "TimeoutError") return fail("timeout", "the database did not answer in time");
  }
  const fetchFailed = all.findIndex((x) => x.name === "TypeError" && x.message === "fetch failed");
  if (fetchFailed < 0) return undefined;
  const inner = str(all[fetchFailed + 1]?.message);
  return fail("unreachable", `cannot reach the database server${inner ? ` (${inner})` : ""}`);
}

/** The words for any error met while using the database: its cause when it is the database's, else its message. */
export function describeDbError(e: unknown): string {
  const f = dbFailure(e);
  if (f) return f.cause;
  const deepest = chain(e)
    .map((x) => str(x.message))
    .filter(Boolean);
  return deepest.at(-1) ?? String(e);
}
