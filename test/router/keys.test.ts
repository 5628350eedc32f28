import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../api/db/client.js";
import { openDb } from "../../api/db/open.js";
import { apiKeys } from "../../api/db/schema.js";
import { hashSecret, newSecret } from "../../api/db/secrets.js";
import type { AppDeps } from "../../api/deps.js";
import { createKeyStore, keysChanged } from "../../api/router/keys.js";
import { migratedDb, testClock } from "../helpers/app.js";

let opened: Awaited<ReturnType<typeof migratedDb>>;
beforeAll(async () => {
  opened = await migratedDb();
});
afterAll(() => opened.close());

/** Stores a key (straight into the table, as another instance's API would) and returns its secret. */
async function addKey(name: string, spec: object, secret = newSecret("key")) {
  await opened.store.write((tx) =>
    tx.insert(apiKeys).values({
      name,
      spec: JSON.stringify(spec),
      version: 1,
      createdAt: 0,
      updatedAt: 0,
      hash: "",
      secretIssuedAt: 0,
    }),
  );
  await setSecret(name, secret);
  return secret;
}
const setSecret = async (name: string, secret: string) => {
  const hash = await hashSecret(secret);
  await opened.store.write((tx) => tx.update(apiKeys).set({ hash }).where(eq(apiKeys.name, name)));
};
const setSpec = (name: string, spec: object) =>
  opened.store.write((tx) =>
    tx
      .update(apiKeys)
      .set({ spec: JSON.stringify(spec) })
      .where(eq(apiKeys.name, name)),
  );

/** A store whose reads can be made to fail, and a count of them. */
function flakyStore() {
  const s = { reads: 0, down: false };
  const db = new Proxy(opened.db, {
    get(target, prop, receiver) {
      if (prop === "select") {
        return (...args: unknown[]) => {
          s.reads++;
          if (s.down) throw new Error("SQLITE_CANTOPEN: unable to open database file");
          return (target.select as (...a: unknown[]) => unknown)(...args);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  const store: Store = { ...opened.store, db };
  return Object.assign(s, { store });
}

describe("createKeyStore", () => {
  it("finds a key by its secret, with the limits of its spec; other secrets are unknown", async () => {
    const secret = await addKey("find-me", {
      models: ["m1"],
      requestsPerMinute: 10,
      tokensPerMinute: 1000,
      expiresAt: 5,
    });
    const keys = createKeyStore(opened.store, { now: testClock().now });
    expect(await keys.identify(secret)).toEqual({
      id: "find-me@0",
      name: "find-me",
      models: ["m1"],
      requestsPerMinute: 10,
      tokensPerMinute: 1000,
      expiresAt: 5,
    });
    expect(await keys.identify(newSecret("key"))).toBeUndefined();
  });

  it("does not read the database for a secret that is no API key, nor cache it", async () => {
    const f = flakyStore();
    const keys = createKeyStore(f.store, { now: testClock().now });
    for (const s of ["", "sk-openai-style", "llmgw_adm_0000000000000000000000000000000000000000", "llmgw_node_x"])
      expect(await keys.identify(s)).toBeUndefined();
    expect(f.reads).toBe(0);
    expect(keys.size()).toBe(0);
  });

  it("caches answers, found and not found, for ttlMs; one read for concurrent lookups", async () => {
    const f = flakyStore();
    const clock = testClock();
    const keys = createKeyStore(f.store, { now: clock.now, ttlMs: 5000 });
    const secret = await addKey("cached", { requestsPerMinute: 1 });
    const results = await Promise.all(Array.from({ length: 20 }, () => keys.identify(secret)));
    expect(results.every((r) => r?.name === "cached")).toBe(true);
    expect(f.reads).toBe(1);
    await setSpec("cached", { requestsPerMinute: 2 });
    clock.advance(4999);
    expect((await keys.identify(secret))?.requestsPerMinute).toBe(1);
    expect(f.reads).toBe(1);
    clock.advance(1);
    expect((await keys.identify(secret))?.requestsPerMinute).toBe(2);
    expect(f.reads).toBe(2);

    // not found is cached too: a key made elsewhere with that secret is seen after ttlMs
    const later = newSecret("key");
    expect(await keys.identify(later)).toBeUndefined();
    await addKey("later", {}, later);
    expect(await keys.identify(later)).toBeUndefined();
    expect(f.reads).toBe(3);
    clock.advance(5000);
    expect(await keys.identify(later)).toEqual({ id: "later@0", name: "later" });
  });

  it("forget(): every key is read again at once (a rotation and a deletion take effect)", async () => {
    const clock = testClock();
    const keys = createKeyStore(opened.store, { now: clock.now, ttlMs: 60_000 });
    const old = await addKey("rotated", {});
    expect(await keys.identify(old)).toEqual({ id: "rotated@0", name: "rotated" });
    const fresh = newSecret("key");
    await setSecret("rotated", fresh);
    expect(await keys.identify(old)).toEqual({ id: "rotated@0", name: "rotated" });
    keys.forget();
    expect(await keys.identify(old)).toBeUndefined();
    expect(await keys.identify(fresh)).toEqual({ id: "rotated@0", name: "rotated" });
    await opened.store.write((tx) => tx.delete(apiKeys).where(eq(apiKeys.name, "rotated")));
    keysChanged({ router: { keys } } as unknown as AppDeps);
    expect(await keys.identify(fresh)).toBeUndefined();
    keysChanged({} as AppDeps); // an app without a router: nothing to tell
  });

  it("keeps answering keys it has seen while the database is down, asks again only every ttlMs, and says so once", async () => {
    const f = flakyStore();
    const clock = testClock();
    const lines: string[] = [];
    const log = {
      info: (m: string) => lines.push(`info ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
      error: (m: string) => lines.push(`error ${m}`),
    };
    const keys = createKeyStore(f.store, { now: clock.now, ttlMs: 5000, log });
    const known = await addKey("survivor", { tokensPerMinute: 7 });
    const gone = newSecret("key");
    expect(await keys.identify(known)).toEqual({ id: "survivor@0", name: "survivor", tokensPerMinute: 7 });
    expect(await keys.identify(gone)).toBeUndefined();

    f.down = true;
    keys.forget(); // even what forget made stale is answered from while the database is down
    clock.advance(60_000);
    const reads = f.reads;
    expect(await keys.identify(known)).toEqual({ id: "survivor@0", name: "survivor", tokensPerMinute: 7 });
    expect(await keys.identify(gone)).toBeUndefined();
    for (let i = 0; i < 10; i++) expect(await keys.identify(known)).toMatchObject({ name: "survivor" });
    expect(f.reads - reads).toBe(2);
    clock.advance(5000);
    expect(await keys.identify(known)).toMatchObject({ name: "survivor" });
    expect(f.reads - reads).toBe(3);
    // a secret never seen cannot be answered: the caller says 503, not 401
    await expect(keys.identify(newSecret("key"))).rejects.toThrow(/SQLITE_CANTOPEN/);
    expect(lines.filter((l) => l.startsWith("warn"))).toEqual([
      "warn router: cannot read API keys; answering from the keys seen before",
    ]);

    f.down = false;
    clock.advance(5000);
    await setSpec("survivor", { tokensPerMinute: 8 });
    expect(await keys.identify(known)).toEqual({ id: "survivor@0", name: "survivor", tokensPerMinute: 8 });
    expect(lines.at(-1)).toBe("info router: API keys readable again");
  });

  it("serves a known key when the database client itself is closed", async () => {
    const other = await openDb(opened.url);
    const clock = testClock();
    const keys = createKeyStore(other.store, { now: clock.now, ttlMs: 1000 });
    const secret = await addKey("closed-db", { requestsPerMinute: 3 });
    expect(await keys.identify(secret)).toEqual({ id: "closed-db@0", name: "closed-db", requestsPerMinute: 3 });
    other.client.close();
    clock.advance(10_000);
    expect(await keys.identify(secret)).toEqual({ id: "closed-db@0", name: "closed-db", requestsPerMinute: 3 });
    await expect(keys.identify(newSecret("key"))).rejects.toThrow();
  });

  it("bounds what it caches: made-up secrets cannot push known keys out", async () => {
    const f = flakyStore();
    const keys = createKeyStore(f.store, { now: testClock().now, maxEntries: 5 });
    const secret = await addKey("bounded", {});
    await keys.identify(secret);
    for (let i = 0; i < 50; i++) await keys.identify(newSecret("key"));
    expect(keys.size()).toBe(6);
    f.down = true;
    keys.forget();
    expect(await keys.identify(secret)).toEqual({ id: "bounded@0", name: "bounded" });
  });
});
