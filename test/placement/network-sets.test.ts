// A one-node replica that talks to peers (data or expert parallel): its GPUs' nearest NICs active and distinct first,
// else the usual NVLink / NUMA order.
import { describe, expect, it } from "vitest";
import { chooseDevices } from "../../api/placement/devices.js";
import { plan } from "../../api/placement/plan.js";
import type { PlaceCard } from "../../api/placement/types.js";
import { talksToPeers } from "../../shared/engines.js";
import { deployment, gpus, hgx, input, model, profile } from "./builders.js";

/** Four NVLink-connected cards on one NUMA node: 0 and 1 share mlx5_0, 2 is near mlx5_1, 3 near mlx5_2. */
const CARDS: PlaceCard[] = [0, 1, 2, 3].map((i) => ({
  index: i,
  numaNode: 0,
  nvlinkPeers: [0, 1, 2, 3].filter((j) => j !== i),
  nics: [["mlx5_0", "mlx5_0", "mlx5_1", "mlx5_2"][i]!],
}));
const FREE = gpus("h100-80g", 4);
const ids = (s: ReturnType<typeof chooseDevices>) => s?.devices.map((d) => d.id);

describe("talksToPeers", () => {
  it.each<[string, string[], boolean]>([
    ["vllm", ["--data-parallel-size", "2"], true],
    ["vllm", ["--enable-expert-parallel"], true],
    ["sglang", ["--dp-size=2"], true],
    ["sglang", ["--enable-dp-attention"], true],
    ["vllm", ["--max-model-len", "8192"], false],
    ["llamacpp", ["--dp-size", "2"], false],
  ])("%s %j → %s", (engine, args, want) => expect(talksToPeers(engine, args)).toBe(want));
});

describe("chooseDevices for a replica that uses the network", () => {
  const active = new Set(["mlx5_0", "mlx5_1"]);

  it("takes cards whose nearest NICs are active and distinct over the lowest ids", () => {
    expect(ids(chooseDevices(CARDS, FREE, 2))).toEqual([0, 1]);
    const set = chooseDevices(CARDS, FREE, 2, { activeNics: active });
    expect(ids(set)).toEqual([0, 2]);
    expect(set).toMatchObject({ nics: true, peers: true, numa: true });
  });

  it("keeps today's choice when no set has distinct active NICs, and says so", () => {
    const set = chooseDevices(CARDS, FREE, 3, { activeNics: active });
    expect(ids(set)).toEqual([0, 1, 2]);
    expect(set?.nics).toBe(false);
  });
});

describe("plan with a data-parallel profile on one node", () => {
  it("gives the replica GPUs near distinct active adapters; without the flag the lowest ids", () => {
    const nodes = [hgx("h1", { cards: CARDS.map((c) => ({ ...c })), devices: FREE, activeNics: ["mlx5_0", "mlx5_1"] })];
    const devicesOf = (args: string[]) => {
      const m = model("m", [profile("dp", "h100-80g", 2, 1, { args })]);
      const p = plan(input({ nodes, models: [m], deployments: [deployment("d", "m", 1)] }));
      return p.assign[0]!.shards[0]!.deviceIds;
    };
    expect(devicesOf(["--data-parallel-size", "2"])).toEqual([0, 2]);
    expect(devicesOf([])).toEqual([0, 1]);
  });
});
