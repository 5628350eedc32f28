import { describe, expect, it } from "vitest";
import { composeGpus, gpuProblems } from "../../../agent/discovery/gpus.js";
import { parseSmiList } from "../../../agent/discovery/smi-list.js";
import { parseSmiXml } from "../../../agent/discovery/smi-xml.js";
import { A100_MIG_L, fixture } from "../../helpers/inventory.js";

const compose = (xml: string, ownPids?: ReadonlySet<number>) =>
  composeGpus({ cards: parseSmiXml(fixture(xml)).gpus, list: parseSmiList(fixture(A100_MIG_L)), ownPids })[0]!;

describe("composeGpus: who is busy on a card in MIG mode", () => {
  it("makes only the MIG instance with another process on it unavailable, not its card or the other instances", () => {
    const g = compose("smi-xml/CRAFTED-a100-mig-process-on-one-instance.xml");
    expect(g.health.problems).toEqual([]);
    expect(g.mig!.instances.map((m) => m.problems ?? [])).toEqual([
      ["in use by another process: python3 (pid 4242)"],
      [],
      [],
      [],
    ]);
  });

  it("does not count llmgw's own engine on an instance as another process", () => {
    const g = compose("smi-xml/CRAFTED-a100-mig-process-on-one-instance.xml", new Set([4242]));
    expect(g.mig!.instances.every((m) => !m.problems?.length)).toBe(true);
  });

  it("keeps card-level faults on the card, where they hold for every instance", () => {
    const [card] = parseSmiXml(fixture("smi-xml/CRAFTED-a100-mig-process-on-one-instance.xml")).gpus;
    const faulty = { ...card!, health: { ...card!.health, eccUncorrectableVolatile: 2 } };
    expect(gpuProblems(faulty)).toEqual(["2 uncorrectable ECC errors since the driver loaded"]);
  });
});
