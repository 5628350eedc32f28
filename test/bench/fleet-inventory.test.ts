import { describe, expect, it } from "vitest";
import { inventoryOf, kindOf, nodeIdOf } from "../../bench/fleet-inventory.js";
import { domainKey } from "../../shared/fabric.js";

const domainsOf = (i: number) => new Set(inventoryOf(i).gpus.map((g) => domainKey(g.fabric) ?? null));
const first = (kind: string, from = 0) => {
  for (let i = from; ; i++) if (kindOf(i).kind === kind) return i;
};

describe("the simulated fleet of bench/fleet.ts", () => {
  it("puts only the GB200 trays in multi-node NVLink domains, as their captures do", () => {
    // HGX boards report the zero cluster UUID: no domain, whatever node they are
    for (const kind of ["h100", "b200", "l40s"]) expect(domainsOf(first(kind)), kind).toEqual(new Set([null]));
    const tray = first("gb200");
    const [domain] = domainsOf(tray);
    expect(domain).toEqual(expect.any(String));
    expect(domainsOf(tray).size).toBe(1);
  });

  it("gives the trays of one rack one domain and the next rack another", () => {
    const trays: number[] = [];
    for (let i = 0; trays.length < 19; i++) if (kindOf(i).kind === "gb200") trays.push(i);
    const domains = trays.map((i) => [...domainsOf(i)][0]);
    expect(new Set(domains.slice(0, 18)).size).toBe(1);
    expect(domains[18]).not.toBe(domains[0]);
  });

  it("gives every node GPU UUIDs of its own", () => {
    const uuids = [0, 1, 2, 3].flatMap((i) => inventoryOf(i).gpus.map((g) => g.uuid));
    expect(new Set(uuids).size).toBe(uuids.length);
    expect(nodeIdOf(0)).not.toBe(nodeIdOf(1));
  });
});
