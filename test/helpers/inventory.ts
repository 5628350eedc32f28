import { readFileSync } from "node:fs";
import { join } from "node:path";
import { composeGpus } from "../../agent/discovery/gpus.js";
import { parseSmiList } from "../../agent/discovery/smi-list.js";
import { parseSmiXml } from "../../agent/discovery/smi-xml.js";
import type { RegisterRequestInput } from "../../shared/schemas/agent.js";
import type { Inventory } from "../../shared/schemas/inventory.js";

export const FIXTURES = join(import.meta.dirname, "..", "fixtures");

/** Reads a fixture file by its path under test/fixtures. */
export const fixture = (path: string) => readFileSync(join(FIXTURES, path), "utf8");

export const H100_XML = "smi-xml/hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml";
export const GB200_XML = "smi-xml/gb200-4gpu-nvl-fabric-clique2-580.173.02-k8stestinfra.xml";

/** A whole node inventory around the GPUs of a real `nvidia-smi -q -x` capture. */
export function inventoryFromCapture(xmlPath: string): Inventory {
  const smi = parseSmiXml(fixture(xmlPath));
  return {
    gpuSource: "nvidia-smi",
    host: {
      osId: "ubuntu",
      osVersion: "24.04",
      osCodename: "noble",
      arch: "x86_64",
      cpuFlags: ["avx2", "avx512f"],
      nvidiaDriver: smi.driverVersion,
    },
    memory: { totalMiB: 2_063_000, availableMiB: 2_000_000 },
    storage: [{ path: "/models", freeBytes: 5e12, totalBytes: 8e12, shared: true, fsType: "nfs4" }],
    weights: [{ path: "/models/llama-3.1-8b-instruct", sizeBytes: 16_069_000_000 }],
    engines: { probed: ["vllm", "sglang", "llamacpp"], versions: { vllm: "0.29.0" } },
    gpus: smi.gpus,
    imex: { state: "absent", channels: 0 },
    hcas: [
      {
        name: "mlx5_0",
        hcaType: "MT4129",
        numaNode: 0,
        ports: [
          {
            port: 1,
            state: "ACTIVE",
            physState: "LinkUp",
            rateGbps: 400,
            linkLayer: "InfiniBand",
            gidPrefix: "fe80:0000:0000:0000",
          },
        ],
      },
    ],
    fabrics: [{ fabric: "ib-east", hcas: ["mlx5_0"], rateGbps: 400 }],
    errors: [],
  };
}

/** The 8-GPU HGX capture as node `nodeId`'s inventory, its GPU UUIDs made unique to that node. */
export function nodeInventory(nodeId: string, xmlPath = H100_XML): Inventory {
  const inv = inventoryFromCapture(xmlPath);
  return { ...inv, gpus: inv.gpus.map((g) => ({ ...g, uuid: `${nodeId}-${g.uuid}` })) };
}

/** A registration body for `nodeId` with the given inventory. */
export function registerBody(
  nodeId: string,
  inventory: Inventory = inventoryFromCapture(H100_XML),
): RegisterRequestInput {
  return {
    nodeId,
    hostname: `${nodeId}.lab`,
    mgmtAddr: "10.0.0.11",
    mgmtInterface: "eth0",
    agentVersion: "0.1.0",
    labels: { pool: "prod", rack: "r12" },
    portRange: { first: 20000, last: 20999 },
    inventory,
    runningShards: [],
  };
}

export const A100_MIG_L = "smi-L/CRAFTED-a100-80gb-mig-4x1g.20gb-for-telegraf-xml.txt";

/** A MIG node's inventory as discovery composes it: a `-q -x` capture of the A100 in MIG mode with its `-L` names. */
export function migInventory(nodeId: string, xmlPath = "smi-xml/a100-sxm4-80gb-mig-v12-telegraf.xml"): Inventory {
  const inv = inventoryFromCapture(xmlPath);
  const gpus = composeGpus({ cards: inv.gpus, list: parseSmiList(fixture(A100_MIG_L)) });
  return { ...inv, gpus: gpus.map((g) => ({ ...g, uuid: `${nodeId}-${g.uuid}` })) };
}
