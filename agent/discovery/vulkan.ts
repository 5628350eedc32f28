// The Vulkan loader's physical devices from `vulkaninfo --summary`: a pure parser and one reader. llama.cpp's Vulkan
// build counts GGML_VK_VISIBLE_DEVICES in this order (vkEnumeratePhysicalDevices), which need not be nvidia-smi's: a
// software renderer (llvmpipe) or another vendor's card may come first, and the loader orders drivers as it likes.
import type { Inventory } from "../../shared/schemas/inventory.js";
import type { EngineOptions } from "../engines/types.js";
import type { Runner } from "./exec.js";

export type VulkanDevice = NonNullable<EngineOptions["vulkanDevices"]>[number];
type DiscoveryError = Inventory["errors"][number];

const SOURCE = "vulkaninfo --summary";
const GPU = /^GPU(\d+):$/;
const FIELD = /^([A-Za-z][\w[\]]*)\s*=\s*(.*)$/;

/**
 * Reads the `Devices:` section of `vulkaninfo --summary`: one `GPU<n>:` entry per physical device, in the loader's
 * order, with indented `key = value` lines (`vendorID = 0x10de`, `deviceName = …`, `deviceUUID = …`; versions before
 * deviceUUID was added leave `uuid` out). Throws an Error naming the source when there is no Devices section.
 */
export function parseVulkanSummary(text: string): VulkanDevice[] {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((l, i) => l.trim() === "Devices:" && /^=+$/.test(lines[i + 1]?.trim() ?? ""));
  if (start < 0) {
    throw new Error(
      `${SOURCE}: no "Devices:" section in its output (${text.trim() ? JSON.stringify(text.trim().slice(0, 120)) : "empty"})`,
    );
  }
  const fields: Record<string, string>[] = [];
  for (const raw of lines.slice(start + 2)) {
    const line = raw.trim();
    if (!line) continue;
    const gpu = GPU.exec(line);
    if (gpu) {
      // the entries' numbers are the loader's indices: a gap would shift every index after it
      if (Number(gpu[1]) !== fields.length)
        throw new Error(`${SOURCE}: GPU${gpu[1]} where GPU${fields.length} was expected`);
      fields.push({});
      continue;
    }
    const field = FIELD.exec(line);
    if (field && fields.length && /^\s/.test(raw)) fields[fields.length - 1]![field[1]!] = field[2]!.trim();
    else if (!/^\s/.test(raw)) break; // a line at the margin that is no GPU entry: the section is over
  }
  return fields.map((f, i) => ({
    name: f.deviceName || `GPU${i}`,
    ...(f.deviceUUID ? { uuid: f.deviceUUID } : {}),
    ...(f.vendorID ? { vendorId: f.vendorID } : {}),
  }));
}

/**
 * This node's Vulkan devices, or why they could not be read. A missing `vulkaninfo` is no error: `devices` is then
 * absent and llama.cpp's Vulkan build gets the card indices as they are.
 */
export async function readVulkanDevices(
  run: Runner,
  timeoutMs: number,
  cmd = "vulkaninfo",
): Promise<{ devices?: VulkanDevice[]; error?: DiscoveryError }> {
  const r = await run(cmd, ["--summary"], timeoutMs);
  if (!r.ok) return r.missing ? {} : { error: { source: SOURCE, message: r.error.slice(0, 2048) } };
  try {
    return { devices: parseVulkanSummary(r.stdout) };
  } catch (e) {
    return { error: { source: SOURCE, message: (e as Error).message.slice(0, 2048) } };
  }
}
