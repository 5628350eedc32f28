// A fetch that hands a network error back as a Response (Response.error(), status 0) instead of throwing: the call is
// "cannot reach", never an HTTP 0 answer.
import { afterEach, expect, it, vi } from "vitest";
import { callJson } from "../../agent/client.js";
import { z } from "../../shared/z.js";

afterEach(() => vi.unstubAllGlobals());

it("reads a Response.error() answer as unreachable", async () => {
  vi.stubGlobal("fetch", async () => Response.error());
  const seen: string[] = [];
  const call = callJson(
    { base: "http://cp.test", method: "GET", path: "/healthz", token: "t", timeoutMs: 1000 },
    z.object({}),
    (f) => {
      seen.push(f.kind);
      return new Error(f.kind);
    },
  );
  await expect(call).rejects.toThrow("unreachable");
  expect(seen).toEqual(["unreachable"]);
});
