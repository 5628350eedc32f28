import { describe, expect, it } from "vitest";
import { parseSmiList } from "../../../agent/discovery/smi-list.js";
import { parseTopo } from "../../../agent/discovery/topo.js";
import { fixture } from "../../helpers/inventory.js";

const FULL = "smi-text/FULLCAPTURE-h100-mig-590.48.01-gpuexporter.txt";

/**
 * The output of one command inside a whole nvidia_gpu_exporter capture (between its `# $ <cmd>` banner and the next).
 */
function section(capture: string, cmd: string): string {
  const start = capture.indexOf(`# $ ${cmd}\n`);
  const body = capture.slice(capture.indexOf("\n", capture.indexOf("\n", start) + 1) + 1);
  return body.slice(0, body.indexOf("\n####"));
}

describe("parseSmiList", () => {
  it("reads an H100 with mixed MIG instances", () => {
    const [g] = parseSmiList(fixture("smi-L/h100-80gb-hbm3-mig-mixed-4dev-gpuexporter.txt"));
    expect(g).toEqual({
      index: 0,
      name: "NVIDIA H100 80GB HBM3",
      uuid: "GPU-00000000-0000-0000-0000-000000000000",
      mig: [
        { index: 0, profile: "3g.40gb", uuid: "MIG-00000000-0000-0000-0000-000000000000" },
        { index: 1, profile: "2g.20gb", uuid: "MIG-00000001-0000-0000-0000-000000000001" },
        { index: 2, profile: "1g.10gb", uuid: "MIG-00000002-0000-0000-0000-000000000002" },
        { index: 3, profile: "1g.10gb", uuid: "MIG-00000003-0000-0000-0000-000000000003" },
      ],
    });
  });

  it("keeps compute-instance profiles such as 1c.3g.71gb as they are", () => {
    const [g] = parseSmiList(fixture("smi-L/h200-mig-ci-profiles-5dev-gpuexporter.txt"));
    expect(g!.name).toBe("NVIDIA H200");
    expect(g!.mig.map((m) => m.profile)).toEqual(["1c.3g.71gb", "2c.3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"]);
    expect(g!.mig[4]!.uuid).toBe("MIG-00000004-0000-0000-0000-000000000004");
  });

  it("reads the -L and topo -m sections of a whole capture", () => {
    const capture = fixture(FULL);
    const [g] = parseSmiList(section(capture, "nvidia-smi -L"));
    expect(g!.mig).toHaveLength(4);
    const topo = parseTopo(section(capture, "nvidia-smi topo -m"));
    expect(topo.gpus).toEqual([{ index: 0, nvlinkPeers: [], numaNode: 0, nics: [] }]);
  });

  it("names the source for lines it does not understand", () => {
    expect(() => parseSmiList("")).toThrow("nvidia-smi -L: no GPU listed");
    expect(() => parseSmiList("No devices were found\n")).toThrow(/^nvidia-smi -L: line 1 not understood/);
    expect(() => parseSmiList("GPU 0: NVIDIA H100 (UUID: GPU-1)\n\u0000\u0001garbage")).toThrow(
      /^nvidia-smi -L: line 2/,
    );
  });
});
