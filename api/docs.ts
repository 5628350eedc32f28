// /docs: the interactive API reference, rendered in the browser from /openapi.json by a pinned copy of Scalar's
// standalone bundle that llmgw serves itself (`npm run build` copies it to dist/public/docs/), so the page works on an
// air-gapped cluster: no script, font or telemetry from another origin.
import { Hono } from "hono";
import type { AppEnv, DocsScript } from "./deps.js";
import { problem } from "./errors.js";

export const DOCS_SCRIPT_PATH = "/docs/api-reference.js";

// everything that would reach another origin turned off: fonts, telemetry, the developer toolbar, the AI chat, MCP
const CONFIG = {
  url: "/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>llmgw API</title>
</head>
<body>
<div id="app"></div>
<script src="${DOCS_SCRIPT_PATH}"></script>
<script>Scalar.createApiReference("#app", ${JSON.stringify(CONFIG)});</script>
</body>
</html>
`;

/** GET /docs and its script. */
export function docsRoutes(script: (() => Promise<DocsScript | undefined>) | undefined) {
  const app = new Hono<AppEnv>();
  app.get("/docs", (c) => c.html(PAGE));
  if (script) {
    app.get(DOCS_SCRIPT_PATH, async (c) => {
      const s = await script();
      if (!s) return problem(c, 404, "not_found", "the API reference script is not built: run `npm run build`");
      const headers: Record<string, string> = {
        "content-type": "text/javascript; charset=utf-8",
        "cache-control": "public, max-age=3600",
        etag: s.etag,
        vary: "accept-encoding",
      };
      if (c.req.header("if-none-match") === s.etag) return c.body(null, 304, headers);
      const gzip = /\bgzip\b/.test(c.req.header("accept-encoding") ?? "");
      if (gzip) headers["content-encoding"] = "gzip";
      return c.body(gzip ? s.gzip : s.plain, 200, headers);
    });
  }
  return app;
}
