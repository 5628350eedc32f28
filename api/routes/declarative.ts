// The declarative kinds (models, deployments, API keys — what Terraform and `llmgw apply` manage): list, get, PUT and
// DELETE under /api/v1/<kind>s, with versions, strong ETags, If-Match / If-None-Match and no-op PUTs. One factory,
// declarativeRoutes(), builds the four routes of a kind; a new kind is its table functions, its view and its docs.
import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ResourceName } from "../../shared/schemas/model.js";
import { z } from "../../shared/z.js";
import { actorOf } from "../audit.js";
import { requireAdmin } from "../auth.js";
import type { Q, Tx } from "../db/client.js";
import { etagOf, type StoredResource } from "../db/resources.js";
import type { AppDeps, AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonBody, jsonResponse } from "../openapi.js";
import { type DeclaredKind, deleteDeclared, type PutRequest, putDeclared } from "./declarative-write.js";

export { checkIfMatch, type DeclaredKind, deleteDeclared, putDeclared } from "./declarative-write.js";

/** The optional `If-Match` header of a conditional PUT or DELETE. */
export const IfMatch = z.object({
  "if-match": z
    .string()
    .max(256)
    .optional()
    .openapi({
      param: { name: "if-match", in: "header" },
      example: '"3"',
      description: "the ETag the change is based on, or `*`",
    }),
});

/** A PUT's conditional headers: `If-Match`, and `If-None-Match: *` to create only (412 when it exists). */
export const PutConditions = IfMatch.extend({
  "if-none-match": z
    .string()
    .max(256)
    .optional()
    .openapi({
      param: { name: "if-none-match", in: "header" },
      example: "*",
      description: "`*`: create only, 412 when the resource exists",
    }),
});

/**
 * A PUT body: `{spec}`, plus `name`, `status` and `metadata` as a GET returned them (status and metadata are ignored).
 */
export function putBody<T extends z.ZodType>(spec: T, id: string) {
  return z
    .strictObject({
      name: z.string().max(63).optional().openapi({ description: "must equal the name in the path when given" }),
      spec,
      status: z.unknown().optional().openapi({ description: "ignored: server state" }),
      metadata: z.unknown().optional().openapi({ description: "ignored: server state" }),
    })
    .openapi(id);
}

/** 400 when a body names another resource than its path. */
export function sameName(path: string, body: string | undefined): void {
  if (body !== undefined && body !== path) {
    throw new ApiError(400, "validation_failed", `name: the body names ${body} but the path names ${path}`, [
      { path: "name", message: `must equal ${path}` },
    ]);
  }
}

/** The spec as the client wrote it (key order included), so that GET echoes it exactly; call after validation. */
export async function writtenSpec(c: Context): Promise<unknown> {
  return ((await c.req.json()) as { spec: unknown }).spec;
}

/** What the four routes of a declarative kind need: how it is stored, shown, checked and documented. */
export type DeclarativeRoutes<S, R extends StoredResource, V, X = undefined> = {
  /** The collection's path segment and OpenAPI tag: "models" → /api/v1/models, /api/v1/models/{name}. */
  collection: string;
  /** The operationId stems: "Model" and "Models" → listModels, getModel, putModel, deleteModel. */
  one: string;
  many: string;
  /** An example name for the path parameter. */
  example: string;
  Spec: z.ZodType<S>;
  /** What GET returns (the 200 of a PUT too). */
  View: z.ZodType<V>;
  /** What a PUT that created the resource returns, when it is more than the view (an API key's secret). */
  Created?: z.ZodType;
  table: DeclaredKind<R, X>;
  /** Rows as the API shows them, in order. */
  view(q: Q, rows: R[], now: number): Promise<V[]>;
  /** Runs inside the PUT's transaction before anything is written: throw an ApiError to refuse the spec. */
  check?(tx: Tx, spec: S): Promise<void>;
  /** Made before a PUT's transaction and handed to `table.save` and `created` (an API key's new secret). */
  prepare?(now: number): Promise<X>;
  /** The body of a 201 (default: the view). */
  created?(view: V, prepared: X): unknown;
  /** Runs after a PUT or DELETE that succeeded (the router's key cache forgets). */
  afterWrite?(deps: AppDeps): void;
  docs: {
    list: string;
    get: string;
    put: string;
    putNotes?: string;
    remove: string;
    replaced?: string;
    createdNote?: string;
  };
};

const PUT_NOTES =
  "The body is `{spec}` (`name`, `status` and `metadata` may be sent back as read; `status` and `metadata` are ignored). " +
  "A PUT that changes nothing keeps the version. `If-Match` makes it conditional (412 when the ETag is not current), `If-None-Match: *` create-only.";

/** The list, get, PUT and DELETE routes of one declarative kind. */
export function declarativeRoutes<S, R extends StoredResource, V, X = undefined>(d: DeclarativeRoutes<S, R, V, X>) {
  const NameParam = z.object({
    name: ResourceName.openapi({ param: { name: "name", in: "path" }, example: d.example }),
  });
  const common = { tags: [d.collection], security: adminSecurity, middleware: requireAdmin };
  const base = `/api/v1/${d.collection}`;
  const kind = d.table.kind;

  const list = createRoute({
    ...common,
    method: "get",
    path: base,
    operationId: `list${d.many}`,
    summary: d.docs.list,
    responses: {
      200: jsonResponse(z.object({ items: z.array(d.View) }), `${kind[0]!.toUpperCase()}${kind.slice(1)}s by name`),
      ...errorResponses(401, 403),
    },
  });
  const get = createRoute({
    ...common,
    method: "get",
    path: `${base}/{name}`,
    operationId: `get${d.one}`,
    summary: d.docs.get,
    request: { params: NameParam },
    responses: {
      200: jsonResponse(d.View, `The ${kind} (ETag header: its version)`),
      ...errorResponses(400, 401, 403, 404),
    },
  });
  const put = createRoute({
    ...common,
    method: "put",
    path: `${base}/{name}`,
    operationId: `put${d.one}`,
    summary: d.docs.put,
    description: [d.docs.putNotes, PUT_NOTES].filter(Boolean).join(" "),
    request: { params: NameParam, headers: PutConditions, body: jsonBody(putBody(d.Spec, `Put${d.one}`)) },
    responses: {
      200: jsonResponse(d.View, d.docs.replaced ?? "Replaced (or unchanged)"),
      201: jsonResponse(d.Created ?? d.View, d.docs.createdNote ?? "Created"),
      ...errorResponses(400, 401, 403, 412, 413, 415),
    },
  });
  const remove = createRoute({
    ...common,
    method: "delete",
    path: `${base}/{name}`,
    operationId: `delete${d.one}`,
    summary: d.docs.remove,
    request: { params: NameParam, headers: IfMatch },
    responses: { 204: { description: "Deleted" }, ...errorResponses(400, 401, 403, 404, 412) },
  });

  const viewOne = async (q: Q, row: R, now: number) => (await d.view(q, [row], now))[0]!;

  return new OpenAPIHono<AppEnv>()
    .openapi(list, async (c) => {
      const { store, now } = c.var.deps;
      return c.json({ items: await d.view(store.db, await d.table.list(store.db), now()) } as never, 200);
    })
    .openapi(get, async (c) => {
      const { name } = c.req.valid("param");
      const { store, now } = c.var.deps;
      const row = await d.table.find(store.db, name);
      if (!row) throw new ApiError(404, "not_found", `no ${kind} ${name}`);
      c.header("etag", etagOf(row.version));
      return c.json((await viewOne(store.db, row, now())) as never, 200);
    })
    .openapi(put, async (c) => {
      const { name } = c.req.valid("param");
      const body = c.req.valid("json") as { name?: string; spec: S };
      sameName(name, body.name);
      const deps = c.var.deps;
      const t = deps.now();
      const prepared = (await d.prepare?.(t)) as X;
      const request: PutRequest = {
        name,
        written: await writtenSpec(c),
        ifMatch: c.req.header("if-match"),
        ifNoneMatch: c.req.header("if-none-match"),
        now: t,
        check: d.check && ((tx) => d.check!(tx, body.spec)),
        actor: actorOf(c.var.principal),
      };
      const { row, created } = await putDeclared(deps.store, d.table, request, prepared);
      d.afterWrite?.(deps);
      c.header("etag", etagOf(row.version));
      const view = await viewOne(deps.store.db, row, t);
      return created
        ? c.json((d.created ? d.created(view, prepared) : view) as never, 201)
        : c.json(view as never, 200);
    })
    .openapi(remove, async (c) => {
      const { name } = c.req.valid("param");
      await deleteDeclared(c.var.deps.store, d.table, name, c.req.header("if-match"), {
        now: c.var.deps.now(),
        actor: actorOf(c.var.principal),
      });
      d.afterWrite?.(c.var.deps);
      return c.body(null, 204);
    });
}
