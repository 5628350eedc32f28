// The NVML binding: libnvidia-ml.so.1 through koffi. Only `loadNvml` touches the library.
import koffi from "koffi";
import type { Nvml, NvmlFabricInfo, NvmlGpu, NvmlMig, NvmlSnapshot } from "./nvml.js";

const NVML_SUCCESS = 0;
const MAX_LINKS = 18;

/** Declares the NVML functions llmgw uses on a loaded library. */
function bind(lib: ReturnType<typeof koffi.load>) {
  koffi.opaque("nvmlDevice_st");
  koffi.struct("nvmlMemory_t", { total: "uint64", free: "uint64", used: "uint64" });
  koffi.struct("nvmlPciInfo_t", {
    busIdLegacy: koffi.array("char", 16),
    domain: "uint32",
    bus: "uint32",
    device: "uint32",
    pciDeviceId: "uint32",
    pciSubSystemId: "uint32",
    busId: koffi.array("char", 32),
  });
  koffi.struct("nvmlGpuFabricInfoV_t", {
    version: "uint32",
    clusterUuid: koffi.array("uint8", 16),
    status: "int32",
    cliqueId: "uint32",
    state: "uint8",
    healthMask: "uint32",
  });
  const f = (proto: string) => lib.func(proto);
  return {
    init: f("int nvmlInit_v2()"),
    shutdown: f("int nvmlShutdown()"),
    driverVersion: f("int nvmlSystemGetDriverVersion(_Out_ uint8_t *version, unsigned int length)"),
    cudaVersion: f("int nvmlSystemGetCudaDriverVersion_v2(_Out_ int *version)"),
    count: f("int nvmlDeviceGetCount_v2(_Out_ unsigned int *count)"),
    handle: f("int nvmlDeviceGetHandleByIndex_v2(unsigned int index, _Out_ nvmlDevice_st **device)"),
    name: f("int nvmlDeviceGetName(nvmlDevice_st *device, _Out_ uint8_t *name, unsigned int length)"),
    uuid: f("int nvmlDeviceGetUUID(nvmlDevice_st *device, _Out_ uint8_t *uuid, unsigned int length)"),
    memory: f("int nvmlDeviceGetMemoryInfo(nvmlDevice_st *device, _Out_ nvmlMemory_t *memory)"),
    pci: f("int nvmlDeviceGetPciInfo_v3(nvmlDevice_st *device, _Out_ nvmlPciInfo_t *pci)"),
    cc: f("int nvmlDeviceGetCudaComputeCapability(nvmlDevice_st *device, _Out_ int *major, _Out_ int *minor)"),
    temperature: f("int nvmlDeviceGetTemperature(nvmlDevice_st *device, int sensor, _Out_ unsigned int *temp)"),
    migMode: f(
      "int nvmlDeviceGetMigMode(nvmlDevice_st *device, _Out_ unsigned int *current, _Out_ unsigned int *pending)",
    ),
    maxMig: f("int nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_st *device, _Out_ unsigned int *count)"),
    migHandle: f(
      "int nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_st *device, unsigned int index, _Out_ nvmlDevice_st **mig)",
    ),
    gi: f("int nvmlDeviceGetGpuInstanceId(nvmlDevice_st *device, _Out_ unsigned int *id)"),
    ci: f("int nvmlDeviceGetComputeInstanceId(nvmlDevice_st *device, _Out_ unsigned int *id)"),
    fabric: f("int nvmlDeviceGetGpuFabricInfoV(nvmlDevice_st *device, _Inout_ nvmlGpuFabricInfoV_t *info)"),
    linkState: f("int nvmlDeviceGetNvLinkState(nvmlDevice_st *device, unsigned int link, _Out_ int *active)"),
    remotePci: f(
      "int nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_st *device, unsigned int link, _Out_ nvmlPciInfo_t *pci)",
    ),
  };
}

const cstr = (buf: Buffer) => buf.toString("utf8", 0, buf.indexOf(0) === -1 ? buf.length : buf.indexOf(0));
const chars = (a: unknown) =>
  typeof a === "string"
    ? a
    : Buffer.from(a as number[])
        .toString("utf8")
        .replace(/\0.*$/s, "");
const uuidOf = (bytes: number[]) => {
  const h = Buffer.from(bytes).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** Loads NVML; throws with the loader's reason when the library is absent or refuses to start. */
export function loadNvml(path = "libnvidia-ml.so.1"): Nvml {
  const lib = koffi.load(path);
  const n = bind(lib);
  const check = (rc: number, what: string) => {
    if (rc !== NVML_SUCCESS) throw new Error(`NVML ${what} failed (return code ${rc})`);
  };
  const text = (fn: (buf: Buffer, len: number) => number, what: string) => {
    const buf = Buffer.alloc(256);
    check(fn(buf, buf.length), what);
    return cstr(buf);
  };
  const uint = (fn: (out: number[]) => number) => {
    const out = [0];
    return fn(out) === NVML_SUCCESS ? out[0] : undefined;
  };

  function device(index: number): NvmlGpu {
    const h: unknown[] = [null];
    check(n.handle(index, h), `GetHandleByIndex(${index})`);
    const dev = h[0];
    const mem: { total?: number | bigint; used?: number | bigint } = {};
    check(n.memory(dev, mem), "GetMemoryInfo");
    const pci: { busId?: unknown } = {};
    check(n.pci(dev, pci), "GetPciInfo");
    const major = [0];
    const minor = [0];
    const cc = n.cc(dev, major, minor) === NVML_SUCCESS ? ([major[0]!, minor[0]!] as [number, number]) : undefined;
    const cur = [0];
    const pend = [0];
    const migMode = n.migMode(dev, cur, pend) === NVML_SUCCESS ? { current: cur[0]!, pending: pend[0]! } : undefined;
    const mig: NvmlMig[] = [];
    if (migMode?.current === 1) {
      const max = uint((o) => n.maxMig(dev, o)) ?? 0;
      for (let i = 0; i < max; i++) {
        const mh: unknown[] = [null];
        if (n.migHandle(dev, i, mh) !== NVML_SUCCESS) continue;
        const m = mh[0];
        const mm: { total?: number | bigint; used?: number | bigint } = {};
        n.memory(m, mm);
        mig.push({
          index: i,
          uuid: text((b, l) => n.uuid(m, b, l), "MIG GetUUID"),
          name: text((b, l) => n.name(m, b, l), "MIG GetName"),
          memoryTotalBytes: Number(mm.total ?? 0),
          memoryUsedBytes: Number(mm.used ?? 0),
          gpuInstanceId: uint((o) => n.gi(m, o)),
          computeInstanceId: uint((o) => n.ci(m, o)),
        });
      }
    }
    const info = {
      version: 36 | (2 << 24),
      clusterUuid: new Array(16).fill(0),
      status: 0,
      cliqueId: 0,
      state: 0,
      healthMask: 0,
    };
    const fabric: NvmlFabricInfo | undefined =
      n.fabric(dev, info) === NVML_SUCCESS
        ? {
            state: info.state,
            status: info.status,
            clusterUuid: uuidOf(info.clusterUuid),
            cliqueId: info.cliqueId,
            healthMask: info.healthMask,
          }
        : undefined;
    const nvlinkRemote: string[] = [];
    for (let link = 0; link < MAX_LINKS; link++) {
      const active = [0];
      if (n.linkState(dev, link, active) !== NVML_SUCCESS || active[0] !== 1) continue;
      const remote: { busId?: unknown } = {};
      if (n.remotePci(dev, link, remote) === NVML_SUCCESS) nvlinkRemote.push(chars(remote.busId));
    }
    return {
      index,
      name: text((b, l) => n.name(dev, b, l), "GetName"),
      uuid: text((b, l) => n.uuid(dev, b, l), "GetUUID"),
      memoryTotalBytes: Number(mem.total ?? 0),
      memoryUsedBytes: Number(mem.used ?? 0),
      pciBusId: chars(pci.busId),
      ...(cc ? { computeCapability: cc } : {}),
      ...(uint((o) => n.temperature(dev, 0, o)) === undefined
        ? {}
        : { temperatureC: uint((o) => n.temperature(dev, 0, o)) }),
      ...(migMode ? { migMode } : {}),
      mig,
      ...(fabric ? { fabric } : {}),
      nvlinkRemote,
    };
  }

  return {
    snapshot(): NvmlSnapshot {
      check(n.init(), "Init");
      try {
        const cuda = [0];
        check(n.cudaVersion(cuda), "GetCudaDriverVersion");
        const count = uint((o) => n.count(o)) ?? 0;
        return {
          driverVersion: text((b, l) => n.driverVersion(b, l), "GetDriverVersion"),
          cudaVersion: `${Math.floor(cuda[0]! / 1000)}.${(cuda[0]! % 1000) / 10}`,
          gpus: Array.from({ length: count }, (_, i) => device(i)),
        };
      } finally {
        n.shutdown();
      }
    },
  };
}
