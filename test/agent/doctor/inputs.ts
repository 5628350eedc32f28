// Doctor inputs for the tests: inventories around real captures (test/fixtures/smi-xml, composed as discovery
// composes them), agent.yaml's relevant parts, and no control plane unless a test adds one.
import { composeGpus } from "../../../agent/discovery/gpus.js";
import { parseSmiList } from "../../../agent/discovery/smi-list.js";
import { parseSmiXml } from "../../../agent/discovery/smi-xml.js";
import type { DoctorInput, ServerProbe } from "../../../agent/doctor/input.js";
import type { Inventory } from "../../../shared/schemas/inventory.js";
import { fixture, GB200_XML, H100_XML, inventoryFromCapture } from "../../helpers/inventory.js";

export { GB200_XML, H100_XML };
export const A100_MIG_XML = "smi-xml/a100-sxm4-80gb-mig-v12-telegraf.xml";
export const A100_MIG_L = "smi-L/CRAFTED-a100-80gb-mig-4x1g.20gb-for-telegraf-xml.txt";
export const DOMAIN = "00000001-0000-0000-0000-000000000001.2";

/**
 * The node inventory of test/helpers/inventory.ts around a capture, its GPUs composed with `nvidia-smi -L` when given
 * (MIG profiles) and their problems computed, as discovery does.
 */
export function inventoryOf(xmlPath: string, listPath?: string): Inventory {
  const inv = inventoryFromCapture(xmlPath);
  const list = listPath ? parseSmiList(fixture(listPath)) : undefined;
  return { ...inv, gpus: composeGpus({ cards: parseSmiXml(fixture(xmlPath)).gpus, list }) };
}

/** A GB200 tray of the real capture, in its domain, with IMEX ready and one channel. */
export function gb200(xmlPath = GB200_XML): Inventory {
  const inv = inventoryOf(xmlPath);
  inv.imex = { state: "ready", domainState: "UP", channels: 1 };
  return inv;
}

export const IMEX_NODES_CONFIG = "/etc/nvidia-imex/nodes_config.cfg";

/**
 * A doctor input around `inventory`: agent.yaml's fabric `ib-east` on mlx5_0, no NVML, no control plane, a
 * nodes_config.cfg of two addresses, nvidia_peermem loaded.
 */
export function inputOf(inventory: Inventory, more: Partial<DoctorInput> = {}): DoctorInput {
  return {
    inventory,
    config: {
      fabrics: [{ name: "ib-east", hcas: ["mlx5_0"] }],
      nvml: false,
      commandEngine: false,
      stateDir: "/var/lib/llmgw",
      imexChannelsDir: "/dev/nvidia-caps-imex-channels",
    },
    nvml: { ok: false, error: "Failed to load shared library" },
    imexConfig: { path: IMEX_NODES_CONFIG, kind: "read", addresses: ["10.0.0.1", "10.0.0.2"] },
    gpudirect: { peermem: true, nvPeerMem: false },
    ...more,
  };
}

/** A control plane that answered /healthz at `localMs` with `Date: serverDate`, and accepted the node token. */
export function serverOk(
  more: Partial<ServerProbe> = {},
  localMs = Date.parse("2026-01-15T10:00:00.500Z"),
  serverDate = "Thu, 15 Jan 2026 10:00:00 GMT",
): ServerProbe {
  return {
    url: "https://cp.lab",
    health: { ok: true, version: "0.1.0", rttMs: 3, localMs, serverDate },
    token: { kind: "accepted", nodeId: "gpu-01" },
    ...more,
  };
}
