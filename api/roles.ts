// Which role of admin token each admin route needs, in one table: requireAdmin enforces it, the console hides what a
// session's role cannot do, the auth matrix test checks every route of the OpenAPI document against it, and
// docs/api.md prints it.
import type { Role } from "../shared/schemas/token.js";

/** Roles from least to most: each may do everything the ones before it may. */
export const ROLE_ORDER: readonly Role[] = ["viewer", "operator", "admin"];

/**
 * The least role each admin-token route needs, keyed `METHOD /path` as the OpenAPI document spells it. Reads are for
 * every role; the operator changes what runs (models, deployments, node cordon/drain); credentials (admin tokens,
 * join tokens, API keys), node deletion and registering a node with an admin token are the admin's. A route missing
 * here needs admin.
 */
export const ROUTE_ROLES: Readonly<Record<string, Role>> = {
  "GET /api/v1/tokens": "viewer",
  "POST /api/v1/tokens": "admin",
  "DELETE /api/v1/tokens/{id}": "admin",
  "GET /api/v1/join-tokens": "viewer",
  "POST /api/v1/join-tokens": "admin",
  "DELETE /api/v1/join-tokens/{id}": "admin",
  "POST /api/v1/agents/register": "admin",
  "GET /api/v1/nodes": "viewer",
  "GET /api/v1/nodes/{id}": "viewer",
  "DELETE /api/v1/nodes/{id}": "admin",
  "POST /api/v1/nodes/{id}/cordon": "operator",
  "POST /api/v1/nodes/{id}/uncordon": "operator",
  "POST /api/v1/nodes/{id}/drain": "operator",
  "GET /api/v1/events": "viewer",
  "GET /api/v1/models": "viewer",
  "GET /api/v1/models/{name}": "viewer",
  "PUT /api/v1/models/{name}": "operator",
  "DELETE /api/v1/models/{name}": "operator",
  "GET /api/v1/deployments": "viewer",
  "GET /api/v1/deployments/{name}": "viewer",
  "PUT /api/v1/deployments/{name}": "operator",
  "DELETE /api/v1/deployments/{name}": "operator",
  "GET /api/v1/replicas": "viewer",
  "GET /api/v1/replicas/{id}": "viewer",
  "GET /api/v1/replicas/{id}/logs": "viewer",
  "GET /api/v1/plan": "viewer",
  "GET /api/v1/nvlink": "viewer",
  "GET /api/v1/api-keys": "viewer",
  "GET /api/v1/api-keys/{name}": "viewer",
  "PUT /api/v1/api-keys/{name}": "admin",
  "DELETE /api/v1/api-keys/{name}": "admin",
  "POST /api/v1/api-keys/{name}/rotate": "admin",
  "GET /api/v1/usage": "viewer",
};

/** `/api/v1/nodes/:id` (Hono) → `/api/v1/nodes/{id}` (OpenAPI). */
export const openApiPath = (honoPath: string) => honoPath.replace(/\/:([A-Za-z0-9_]+)/g, "/{$1}");

/** The least role a route needs (admin when the table does not name it). */
export function roleNeeded(method: string, path: string): Role {
  return ROUTE_ROLES[`${method.toUpperCase()} ${openApiPath(path)}`] ?? "admin";
}

/** True when `role` may do what `needed` may. */
export const roleAllows = (role: Role, needed: Role) => ROLE_ORDER.indexOf(role) >= ROLE_ORDER.indexOf(needed);

/** The detail of a 403 for a role that falls short, naming both. */
export const roleRefusal = (what: string, role: Role, needed: Role) =>
  `${what} needs the ${needed} role${needed === "admin" ? "" : " or higher"}; this token has the ${role} role`;
