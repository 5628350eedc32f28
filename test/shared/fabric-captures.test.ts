import { describe, expect, it } from "vitest";
import { domainKey, isJoined, nodeFabric, notJoinedReason } from "../../shared/fabric.js";
import type { GpuFabric } from "../../shared/schemas/gpu.js";
import { fixture } from "../helpers/inventory.js";

/** The first Fabric block of an `nvidia-smi -q` text capture, as the wire carries it (N/A left out). */
function fabricBlock(text: string): GpuFabric | undefined {
  const block = text.slice(text.search(/^\s*Fabric\s*$/m));
  const field = (name: string) => {
    const v = new RegExp(`^\\s*${name}\\s*:\\s*(.+?)\\s*$`, "m").exec(block)?.[1];
    return v && v !== "N/A" ? v : undefined;
  };
  const state = field("State");
  if (!state) return undefined;
  const summary = field("Summary");
  const bandwidth = field("Bandwidth");
  return {
    state,
    ...(field("Status") ? { status: field("Status") } : {}),
    ...(field("CliqueId") ? { cliqueId: field("CliqueId") } : {}),
    ...(field("ClusterUUID") ? { clusterUuid: field("ClusterUUID") } : {}),
    ...(summary || bandwidth
      ? { health: { ...(summary ? { summary } : {}), ...(bandwidth ? { bandwidth } : {}) } }
      : {}),
  };
}

describe("the fabric rules on real nvidia-smi -q text", () => {
  it.each([
    [
      "gb200-q-grep-fabric-FRAGMENT-clique32766-sirius-hostfacts.txt",
      true,
      "3482beb4-a3cd-48a4-9b6c-a6ba43bc59a4.32766",
      undefined,
    ],
    [
      "mnnvl-q-grep-C3-fabric-summary-unhealthy-FRAGMENT-TRANSCRIBED-dra626.txt",
      true,
      "dc6e40c4-d722-4357-9ba6-5291dd461278.2",
      undefined,
    ],
    [
      "q-fabric-status-insufficient-resources-FRAGMENT-DEDENTED-TRANSCRIBED-azhpc506.txt",
      false,
      undefined,
      "fabric status Insufficient Resources",
    ],
    [
      "h100-80gb-hbm3-q-fabric-completed-zero-cluster-gpuexporter.txt",
      false,
      undefined,
      "not in a multi-node NVLink domain (cluster UUID is zero)",
    ],
    [
      "hgx-8x-h100-80gb-hbm3-535.161.08-fabric-gpud.txt",
      false,
      undefined,
      "no cluster UUID reported (a single machine, or a driver older than 560)",
    ],
    ["titan-v-560.35.03-fabric-clique-na-gpud.txt", false, undefined, "no NVLink fabric reported"],
  ])("%s: joined %s, domain %s", (file, joined, key, reason) => {
    const f = fabricBlock(fixture(`smi-text/${file}`));
    expect(isJoined(f)).toBe(joined);
    expect(domainKey(f)).toBe(key);
    expect(notJoinedReason(f)).toBe(reason);
  });

  it("carries an unhealthy summary into the node's fabric health", () => {
    const f = fabricBlock(fixture("smi-text/mnnvl-q-grep-C3-fabric-summary-unhealthy-FRAGMENT-TRANSCRIBED-dra626.txt"));
    expect(
      nodeFabric([
        { index: 0, fabric: f },
        { index: 1, fabric: { ...f!, health: { summary: "Healthy" } } },
      ]),
    ).toMatchObject({ health: "Unhealthy", joined: 2 });
  });
});
