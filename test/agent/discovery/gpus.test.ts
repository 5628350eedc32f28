import { describe, expect, it } from "vitest";
import { composeGpus, DEFAULT_SLOWDOWN_C, gpuProblems, overTemperature } from "../../../agent/discovery/gpus.js";
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

describe("temperature as a placement rule", () => {
  const card = (xml: string, temperatureC: number) => {
    const [g] = parseSmiXml(fixture(xml)).gpus;
    // the telegraf captures list desktop processes: leave them out, this is about temperature
    return { ...g!, health: { ...g!.health, temperatureC, processes: [] } };
  };

  it("reads the card's own slowdown temperature from -q -x (the real A10G capture: 95 °C)", () => {
    expect(parseSmiXml(fixture("smi-xml/a10g-v11-telegraf.xml")).gpus[0]!.health.temperatureSlowdownC).toBe(95);
  });

  it("makes a card at or over its own slowdown temperature unavailable, with the reason", () => {
    expect(gpuProblems(card("smi-xml/a10g-v11-telegraf.xml", 94))).toEqual([]);
    expect(gpuProblems(card("smi-xml/a10g-v11-telegraf.xml", 95))).toEqual([
      "at 95 °C, at or over its slowdown temperature (95 °C)",
    ]);
  });

  it("uses the configured default for a card that reports none (recent drivers' captures, the real H100)", () => {
    const h100 = card("smi-xml/hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml", 88);
    expect(h100.health.temperatureSlowdownC).toBeUndefined();
    expect(overTemperature(h100)).toBe(`at 88 °C, at or over its slowdown temperature (${DEFAULT_SLOWDOWN_C} °C)`);
    expect(gpuProblems(h100, new Set(), 90)).toEqual([]);
    const cool = card("smi-xml/hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml", 40);
    expect(overTemperature(cool)).toBeUndefined();
  });
});
