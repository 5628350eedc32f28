import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { prettyJSON } from "hono/pretty-json";
import { NvlinkView } from "../../shared/schemas/nvlink.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import type { AppEnv } from "../deps.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";
import { readNvlinkView } from "../views/nvlink.js";

const get = createRoute({
  method: "get",
  path: "/api/v1/nvlink",
  operationId: "getNvlink",
  tags: ["nodes"],
  summary:
    "Every multi-node NVLink domain: trays in order, each GPU joined or why not, IMEX, eligibility and every reason against it, placed shards",
  description:
    "Nodes whose NVSwitch serves only their own board (a zero cluster UUID, e.g. HGX) are listed apart under `standalone`; " +
    "nodes with no NVLink fabric at all under `noFabric`. The reasons are the ones placement uses (shared/fabric.ts).",
  security: adminSecurity,
  middleware: [requireAdmin, prettyJSON()] as const,
  request: {
    query: z.object({
      pretty: z
        .string()
        .max(8)
        .optional()
        .openapi({
          param: { name: "pretty", in: "query" },
          description: "present (`?pretty`): indent the JSON for reading",
          example: "",
        }),
    }),
  },
  responses: { 200: jsonResponse(NvlinkView, "The NVLink domains now"), ...errorResponses(400, 401, 403) },
});

export const nvlinkRoutes = new OpenAPIHono<AppEnv>().openapi(get, async (c) => {
  const { store, now, settings } = c.var.deps;
  return c.json(await readNvlinkView(store.db, now(), settings.nodeLostAfterS), 200);
});
