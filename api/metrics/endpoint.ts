// GET /metrics: the instance's Prometheus text, behind LLMGW_METRICS_TOKEN when one is set.
import type { Context } from "hono";
import { constantTimeEqual, hashSecret } from "../db/secrets.js";
import type { AppEnv } from "../deps.js";
import { problem } from "../errors.js";

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Serves `deps.metricsText()`; 404 where the deployment has none, 401 without the scrape token when one is set. */
export async function serveMetrics(c: Context<AppEnv>) {
  const { metricsText, settings } = c.var.deps;
  if (!metricsText) return problem(c, 404, "not_found", "metrics are not served by this deployment");
  if (settings.metricsToken) {
    const sent = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
    // hashes compare in constant time whatever the lengths
    const ok = sent !== undefined && constantTimeEqual(await hashSecret(sent), await hashSecret(settings.metricsToken));
    if (!ok) {
      const detail =
        sent === undefined
          ? "missing bearer token: send `Authorization: Bearer <LLMGW_METRICS_TOKEN>`"
          : "wrong metrics token";
      return problem(c, 401, "unauthorized", detail, undefined, { "www-authenticate": 'Bearer realm="llmgw-metrics"' });
    }
  }
  return c.text(await metricsText(), 200, { "content-type": CONTENT_TYPE });
}
