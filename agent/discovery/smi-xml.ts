// Pure parser of `nvidia-smi -q -x`: GPUs as the wire schema carries them (topology and MIG names come from other
// sources).
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { gpuClass } from "../../shared/classes.js";
import type { Gpu, GpuFabric, MigInstance } from "../../shared/schemas/gpu.js";
import { defined } from "./objects.js";

type X = Record<string, unknown> | string | undefined;
const REPEATED = new Set(["gpu", "mig_device", "process_info"]);
const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => REPEATED.has(name),
});

/** A child element of `x`, or undefined. */
const at = (x: X, ...path: string[]): X =>
  path.reduce<X>((n, k) => (n && typeof n === "object" ? (n[k] as X) : undefined), x);

/** The text of an element, or undefined when absent or N/A. */
function text(x: X): string | undefined {
  if (typeof x !== "string") return undefined;
  const v = x.trim();
  return v === "" ||
    v === "N/A" ||
    v === "None" ||
    /^Requested functionality has been deprecated/.test(v) ||
    /^\[?Not Supported\]?$/.test(v)
    ? undefined
    : v;
}

/** The leading number of an element ("81559 MiB", "29 C", "68.57 W"), or undefined. */
function num(x: X): number | undefined {
  const m = /^-?\d+(\.\d+)?/.exec(text(x) ?? "");
  return m ? Number(m[0]) : undefined;
}
const int = (x: X) => (num(x) === undefined ? undefined : Math.trunc(num(x)!));
const yes = (x: X) => (text(x) === undefined ? undefined : /^yes$/i.test(text(x)!));
const list = (x: X): Record<string, unknown>[] => (Array.isArray(x) ? x : []);

function sumUncorrectable(block: X): number | undefined {
  if (!block || typeof block !== "object") return undefined;
  const keys = Object.keys(block).filter((k) => /^(s|d)ram_uncorrectable/.test(k));
  const values = keys.map((k) => int(block[k] as X)).filter((v): v is number => v !== undefined);
  if (values.length) return values.reduce((a, b) => a + b, 0);
  return int(at(block, "double_bit", "total"));
}

function fabricOf(x: X): GpuFabric | undefined {
  const state = text(at(x, "state"));
  if (!state) return undefined;
  const h = at(x, "health");
  const health = defined({
    summary: text(at(h, "summary")),
    bandwidth: text(at(h, "bandwidth")),
    routeRecoveryInProgress: text(at(h, "route_recovery_in_progress")),
    routeUnhealthy: text(at(h, "route_unhealthy")),
    accessTimeoutRecovery: text(at(h, "access_timeout_recovery")),
    incorrectConfiguration: text(at(h, "incorrect_configuration")),
  });
  return defined({
    state,
    status: text(at(x, "status")),
    cliqueId: text(at(x, "cliqueId")),
    clusterUuid: text(at(x, "clusterUuid")),
    health: Object.keys(health).length ? health : undefined,
  });
}

function processes(x: X) {
  return list(at(x, "process_info")).map((p) =>
    defined({
      pid: int(p.pid as X) ?? 0,
      name: text(p.process_name as X),
      usedMemoryMiB: int(p.used_memory as X),
      gi: int(p.gpu_instance_id as X),
      ci: int(p.compute_instance_id as X),
    }),
  );
}

function migInstances(g: X, procs: ReturnType<typeof processes>): MigInstance[] {
  return list(at(g, "mig_devices", "mig_device")).map((m) => {
    const gi = int(m.gpu_instance_id as X);
    const ci = int(m.compute_instance_id as X);
    return defined({
      index: int(m.index as X) ?? 0,
      gpuInstanceId: gi,
      computeInstanceId: ci,
      memoryTotalMiB: int(at(m as X, "fb_memory_usage", "total")),
      memoryUsedMiB: int(at(m as X, "fb_memory_usage", "used")),
      processes: procs.filter((p) => p.gi === gi && p.ci === ci).map(({ gi: _g, ci: _c, ...p }) => p),
    });
  });
}

/** The children of `<gpu>` this parser reads; the rest (clock tables, inforom, encoder stats …) is most of the text. */
const KEPT = new Set([
  "product_name",
  "uuid",
  "fb_memory_usage",
  "pci",
  "compute_cap",
  "utilization",
  "ecc_errors",
  "retired_pages",
  "remapped_rows",
  "temperature",
  "gpu_power_readings",
  "power_readings",
  "processes",
  "mig_mode",
  "mig_devices",
  "fabric",
  "platformInfo",
]);
const CHILD = /<([A-Za-z_][\w.-]*)\b[^>]*?(?:\/>|>[\s\S]*?<\/\1>)/g;
/** Blocks inside kept children that nothing reads. */
const UNREAD =
  /<(row_remapper_histogram|aggregate_uncorrectable_sram_sources|multiple_single_bit_retirement|double_bit_retirement|device_attributes|bar1_memory_usage)>[\s\S]*?<\/\1>/g;

/**
 * Drops the `<gpu>` children the parser does not read, so that validating and parsing touch a quarter of the text.
 * Anything between the children that is not an element is malformed and reported, not dropped.
 */
function prune(xml: string): string {
  return xml.replace(/(<gpu\b[^>]*>)([\s\S]*?)(<\/gpu>)/g, (_, open: string, body: string, close: string) => {
    let kept = "";
    let at = 0;
    for (const m of body.matchAll(CHILD)) {
      if (body.slice(at, m.index).trim()) break;
      at = m.index + m[0].length;
      if (m[1] === "pci") kept += `<pci>${/<pci_bus_id>[^<]*<\/pci_bus_id>/.exec(m[0])?.[0] ?? ""}</pci>`;
      else if (KEPT.has(m[1]!)) kept += m[0].replace(UNREAD, "");
    }
    const rest = body.slice(at).trim();
    if (rest) throw new Error(`nvidia-smi -q -x: malformed XML in <gpu>: ${JSON.stringify(rest.slice(0, 80))}`);
    return open + kept + close;
  });
}

/** Parses `nvidia-smi -q -x`; throws an Error naming the source when the XML is malformed. */
export function parseSmiXml(output: string): { driverVersion?: string; cudaVersion?: string; gpus: Gpu[] } {
  if (!/<\/nvidia_smi_log>\s*$/.test(output)) {
    throw new Error(
      `nvidia-smi -q -x: ${output.trim() ? "output is truncated or not XML (no closing </nvidia_smi_log>)" : "empty output"}`,
    );
  }
  const xml = prune(output);
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new Error(`nvidia-smi -q -x: malformed XML at line ${valid.err.line}: ${valid.err.msg}`);
  const root = at(parser.parse(xml) as X, "nvidia_smi_log");
  if (!root || typeof root !== "object") throw new Error("nvidia-smi -q -x: no <nvidia_smi_log> element");
  const driverVersion = text(at(root, "driver_version"));
  const cudaVersion = text(at(root, "cuda_version"));
  const gpus = list(at(root, "gpu")).map((raw, index): Gpu => {
    const g = raw as X;
    const name = text(at(g, "product_name")) ?? "unknown";
    const memoryTotalMiB = int(at(g, "fb_memory_usage", "total")) ?? 0;
    const current = text(at(g, "mig_mode", "current_mig"));
    const pending = text(at(g, "mig_mode", "pending_mig"));
    const migMode = current?.toLowerCase() === "enabled";
    const procs = processes(at(g, "processes"));
    const instances = migMode ? migInstances(g, procs) : [];
    const power = at(g, "gpu_power_readings") ?? at(g, "power_readings");
    const ecc = at(g, "ecc_errors");
    return defined({
      index,
      uuid: text(at(g, "uuid")) ?? `unknown-${index}`,
      name,
      class: gpuClass(name, memoryTotalMiB),
      memoryTotalMiB,
      memoryUsedMiB: int(at(g, "fb_memory_usage", "used")),
      computeCapability: text(at(g, "compute_cap")),
      pciBusId: text(at(g, "pci", "pci_bus_id")),
      driverVersion,
      cudaVersion,
      utilizationPercent: migMode ? undefined : num(at(g, "utilization", "gpu_util")),
      nvlinkPeers: [],
      nics: [],
      fabric: fabricOf(at(g, "fabric")),
      platform: platformOf(at(g, "platformInfo")),
      health: defined({
        temperatureC: num(at(g, "temperature", "gpu_temp")),
        temperatureSlowdownC: num(at(g, "temperature", "gpu_temp_slow_threshold")),
        powerDrawW: num(at(power, "instant_power_draw")) ?? num(at(power, "power_draw")),
        powerLimitW: num(at(power, "current_power_limit")) ?? num(at(power, "power_limit")),
        eccUncorrectableVolatile: sumUncorrectable(at(ecc, "volatile")),
        eccUncorrectableAggregate: sumUncorrectable(at(ecc, "aggregate")),
        retiredPagesPending: yes(at(g, "retired_pages", "pending_retirement")),
        remappedRowsPending: yes(at(g, "remapped_rows", "remapped_row_pending")),
        // in MIG mode a process belongs to the instance its ids name; one that names none stays on the card
        processes: (migMode
          ? procs.filter((p) => !instances.some((m) => m.gpuInstanceId === p.gi && m.computeInstanceId === p.ci))
          : procs
        ).map(({ gi: _g, ci: _c, ...p }) => p),
        problems: [],
      }),
      mig: current ? defined({ current, pending, instances }) : undefined,
    });
  });
  return defined({ driverVersion, cudaVersion, gpus });
}

function platformOf(x: X) {
  if (!x || typeof x !== "object") return undefined;
  const p = defined({
    chassisSerial: text(at(x, "chassis_serial_number")),
    slotNumber: int(at(x, "slot_number")),
    trayIndex: int(at(x, "tray_index")),
    hostId: int(at(x, "host_id")),
    peerType: text(at(x, "peer_type")),
    moduleId: int(at(x, "module_id")),
  });
  return Object.keys(p).length ? p : undefined;
}
