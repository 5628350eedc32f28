import { describe, expect, it } from "vitest";
import { applyAll } from "../../../agent/ctl/apply.js";
import type { ApplyDoc } from "../../../agent/ctl/apply-file.js";
import type { CtlClient } from "../../../agent/ctl/client.js";
import { CtlError } from "../../../agent/ctl/errors.js";

/** A client over a map of stored versions: PUT bumps the version when the spec differs, `refuse` names fail. */
function fakeClient(stored: Record<string, { version: number; spec: string }>, refuse = new Set<string>()) {
  const calls: string[] = [];
  const client = {
    getDeclared: async (kind: string, name: string) => {
      calls.push(`GET ${kind}/${name}`);
      const s = stored[`${kind}/${name}`];
      if (!s) throw new CtlError(404, `no ${kind} ${name}`);
      return { status: 200, data: { metadata: { version: s.version } }, raw: {}, headers: new Headers() };
    },
    putDeclared: async (kind: string, name: string, spec: unknown) => {
      calls.push(`PUT ${kind}/${name}`);
      if (refuse.has(name)) throw new CtlError(400, `spec: bad ${name}`);
      const key = `${kind}/${name}`;
      const before = stored[key];
      const json = JSON.stringify(spec);
      const version = !before ? 1 : before.spec === json ? before.version : before.version + 1;
      stored[key] = { version, spec: json };
      const data = { name, metadata: { version }, ...(before || kind !== "ApiKey" ? {} : { secret: "llmgw_key_s" }) };
      return { status: before ? 200 : 201, data, raw: data, headers: new Headers() };
    },
  };
  return { client: client as unknown as CtlClient, calls };
}

const docs: ApplyDoc[] = [
  { kind: "Model", name: "m", spec: { a: 1 } },
  { kind: "Deployment", name: "d", spec: { model: "m" } },
  { kind: "ApiKey", name: "k", spec: {} },
];

describe("applyAll", () => {
  it("reports created, then unchanged, then updated", async () => {
    const stored = {};
    const first = await applyAll(fakeClient(stored).client, docs, { keepGoing: false });
    expect(first.applied.map((a) => `${a.name} ${a.outcome}`)).toEqual(["m created", "d created", "k created"]);
    expect(first.applied[2]!.secret).toBe("llmgw_key_s");
    const again = await applyAll(fakeClient(stored).client, docs, { keepGoing: false });
    expect(again.applied.map((a) => a.outcome)).toEqual(["unchanged", "unchanged", "unchanged"]);
    expect(again.applied.some((a) => a.secret)).toBe(false);
    const changed = await applyAll(fakeClient(stored).client, [{ ...docs[0]!, spec: { a: 2 } }, docs[1]!], {
      keepGoing: false,
    });
    expect(changed.applied.map((a) => a.outcome)).toEqual(["updated", "unchanged"]);
  });

  it("stops at the first failure, keeping what was applied before it", async () => {
    const { client, calls } = fakeClient({}, new Set(["d"]));
    const failed: string[] = [];
    const r = await applyAll(client, docs, { keepGoing: false, onFailed: (f) => failed.push(f.ref) });
    expect(r.applied.map((a) => a.name)).toEqual(["m"]);
    expect(r.failed.map((f) => f.ref)).toEqual(["deployment/d"]);
    expect(failed).toEqual(["deployment/d"]);
    expect(calls).not.toContain("PUT ApiKey/k");
  });

  it("goes on after a failure with keepGoing", async () => {
    const r = await applyAll(fakeClient({}, new Set(["m"])).client, docs, { keepGoing: true });
    expect(r.applied.map((a) => a.name)).toEqual(["d", "k"]);
    expect(r.failed.map((f) => f.name)).toEqual(["m"]);
  });

  it("fails an object whose version cannot be read, without writing it", async () => {
    const { client, calls } = fakeClient({});
    (client as unknown as { getDeclared: () => Promise<never> }).getDeclared = async () => {
      throw new CtlError(401, "unknown or revoked token");
    };
    const r = await applyAll(client, docs, { keepGoing: false });
    expect(r.failed[0]!.error).toBeInstanceOf(CtlError);
    expect(calls.filter((c) => c.startsWith("PUT"))).toEqual([]);
  });
});
