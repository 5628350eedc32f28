// Rate-limit counters belong to a key's id, not its name: a key deleted and made again under the same name starts
// afresh; a rotation keeps its counters; two keys never share them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyStore } from "../../api/router/keys.js";
import { createLimiter } from "../../api/router/limits.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const put = async (name: string, spec: object) =>
  (await t.admin("PUT", `/api/v1/api-keys/${name}`, { body: { spec } })).json.secret as string;

describe("rate limits by key id", () => {
  it("does not pass a deleted key's counters to a new key of the same name; a rotation keeps them", async () => {
    const keys = createKeyStore(t.store, { now: t.clock.now, ttlMs: 0 });
    const limiter = createLimiter();
    const admit = async (secret: string) => limiter.admit((await keys.identify(secret))!, t.clock.now()).ok;

    const first = await put("x", { requestsPerMinute: 2 });
    expect([await admit(first), await admit(first), await admit(first)]).toEqual([true, true, false]);

    const rotated = (await t.admin("POST", "/api/v1/api-keys/x/rotate")).json.secret as string;
    expect(await admit(rotated)).toBe(false);

    const old = (await keys.identify(rotated))!.id;
    expect((await t.admin("DELETE", "/api/v1/api-keys/x")).status).toBe(204);
    t.clock.advance(1);
    const again = await put("x", { requestsPerMinute: 2 });
    expect((await keys.identify(again))!.id).not.toBe(old);
    expect([await admit(again), await admit(again), await admit(again)]).toEqual([true, true, false]);
  });

  it("counts two keys apart, whatever their names", async () => {
    const keys = createKeyStore(t.store, { now: t.clock.now, ttlMs: 0 });
    const limiter = createLimiter();
    const a = (await keys.identify(await put("team-a", { requestsPerMinute: 1 })))!;
    const b = (await keys.identify(await put("team-b", { requestsPerMinute: 1 })))!;
    expect(a.id).not.toBe(b.id);
    expect(limiter.admit(a, t.clock.now()).ok).toBe(true);
    expect(limiter.admit(b, t.clock.now()).ok).toBe(true);
    expect(limiter.admit(a, t.clock.now()).ok).toBe(false);
    expect(limiter.tracked()).toBe(2);
  });
});
