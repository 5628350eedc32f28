// Reads NCCL's INFO lines (NCCL_DEBUG=INFO, subsystems INIT and NET) into what it chose: the network and its devices,
// GPUDirect RDMA, MNNVL and NVLS, and the transport of each channel between ranks. Pure: lines in, facts out. The
// shapes come from real logs of NCCL 2.18 to 2.27 (test/fixtures/nccl/).

/** One IB device NCCL listed: `[0]mlx5_0:1/IB` → index 0, name mlx5_0, port 1, link layer IB (or RoCE). */
export type IbDevice = { index: number; name: string; port: number; linkLayer: string };

/** What NCCL said in one process (one `host:pid` prefix). */
type Process = { ib: IbDevice[]; sockets: string[] };

export type NcclObservation = {
  version?: string;
  /** `Using network IB` / `Socket` / a plugin's name. */
  network?: string;
  /** Devices listed by `NET/IB : Using`, over all processes, by name:port. */
  ibDevices: IbDevice[];
  /** Interfaces listed by `NET/Socket : Using`. */
  socketInterfaces: string[];
  /** `NET/IB : No device found.` was said. */
  ibMissing: boolean;
  /** Channel transports: `NET/IB`, `NET/Socket`, `NET/<plugin>`, `P2P`, `SHM`, `CollNet`, with how often. */
  channels: Map<string, number>;
  /** IB devices the NET channels used (names), GDRDMA on them or not. */
  netDevicesUsed: Set<string>;
  gdrChannels: number;
  plainNetChannels: number;
  /** `NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'`. */
  gdrDisabled: boolean;
  /**
   * MNNVL used (`MNNVL 1` on a communicator or a clique, channels `via P2P/MNNVL`), or not (`MNNVL 0` on a
   * communicator of several nodes); undefined when NCCL did not say.
   */
  mnnvl?: boolean;
  /** NVLS (NVLink SHARP) set up for a communicator. */
  nvls?: boolean;
  /** The largest `nNodes` of a communicator. */
  nNodes?: number;
  /** Communicators whose init completed. */
  initComplete: number;
};

export function emptyObservation(): NcclObservation {
  return {
    ibDevices: [],
    socketInterfaces: [],
    ibMissing: false,
    channels: new Map(),
    netDevicesUsed: new Set(),
    gdrChannels: 0,
    plainNetChannels: 0,
    gdrDisabled: false,
    initComplete: 0,
  };
}

/**
 * `host:pid:tid [dev] NCCL INFO …` (after a timestamp or an MPI launcher's `[1,0]<stdout>:` as some logs have): the
 * process and the message.
 */
const LINE = /([^\s:\]>]+:\d+):\d+\s+(?:\[\d+\]\s+)?NCCL INFO\s+(.*)$/;
const LOOSE = /NCCL INFO\s+(.*)$/;
/** `NCCL version 2.19.3+cuda12.3`: bare before 2.25 (no prefix), an INFO line after. */
const VERSION = /\bNCCL version (\d+\.\d+\.\d+)/;
/** `[0]mlx5_0:1/IB`, `[8]mlx5_10:1/RoCE`, `[0]mlx5_0:1/IB/SHARP`. */
const IB_DEV = /\[(\d+)\]([\w.-]+):(\d+)\/(\w+)/g;
const SOCKET_DEV = /\[\d+\]([\w.@-]+):/g;
/**
 * `Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA`, `Channel 01 : 2[c7000] -> 0[87000] [receive] via …`
 * (≤ 2.11: bus ids), `Ring 00 : …` (≤ 2.5), `… via SHM/direct/direct`, `… via P2P/direct pointer/read`,
 * `… via NET/AWS Libfabric/0/GDRDMA`. Ring order lines (`Channel 00/16 :    0   3   1`) have no `via`.
 */
const CHANNEL = /^(?:Channel|Ring|Tree)\s+\d+(?:\/\d+)?\s*:.*?\bvia\s+(.+?)\s*$/;

/** A reader that takes lines one at a time (a log read as it grows) and keeps what they said. */
export function createNcclReader() {
  const o = emptyObservation();
  const procs = new Map<string, Process>();
  const proc = (key: string) => {
    let p = procs.get(key);
    if (!p) procs.set(key, (p = { ib: [], sockets: [] }));
    return p;
  };

  function channel(key: string, via: string) {
    const parts = via.split("/");
    const kind = parts[0] === "NET" ? `NET/${parts[1] ?? "?"}` : parts[0]!;
    o.channels.set(kind, (o.channels.get(kind) ?? 0) + 1);
    if (via.startsWith("P2P/MNNVL")) o.mnnvl = true;
    if (parts[0] !== "NET") return;
    if (parts.includes("GDRDMA")) o.gdrChannels++;
    else o.plainNetChannels++;
    // NET/IB/<index>: the index into this process's `NET/IB : Using` list (`0(1)` on newer versions: merged devices)
    const index = Number(/^\d+/.exec(parts[2] ?? "")?.[0]);
    const dev = proc(key).ib.find((d) => d.index === index);
    if (dev && /^IB/.test(parts[1] ?? "")) o.netDevicesUsed.add(dev.name);
  }

  function feed(raw: string) {
    if (!raw.includes("NCCL INFO")) {
      const bare = VERSION.exec(raw);
      if (bare) o.version ??= bare[1];
      return;
    }
    const m = LINE.exec(raw);
    const key = m?.[1] ?? "?";
    const msg = (m?.[2] ?? LOOSE.exec(raw)?.[1] ?? "").trim();
    let v: RegExpExecArray | null;
    if ((v = VERSION.exec(msg))) o.version ??= v[1];
    else if ((v = /^Using network (.+?)\s*$/.exec(msg))) o.network = v[1];
    else if (/^NET\/IB\s*:\s*No device found/.test(msg)) o.ibMissing = true;
    else if (/^NET\/IB\s*:\s*GPU Direct RDMA Disabled/.test(msg)) o.gdrDisabled = true;
    else if (/^NET\/IB\s*:\s*Using\s/.test(msg)) {
      const p = proc(key);
      for (const d of msg.split(";")[0]!.matchAll(IB_DEV)) {
        const dev = { index: Number(d[1]), name: d[2]!, port: Number(d[3]), linkLayer: d[4]! };
        p.ib = [...p.ib.filter((x) => x.index !== dev.index), dev];
        if (!o.ibDevices.some((x) => x.name === dev.name && x.port === dev.port)) o.ibDevices.push(dev);
      }
    } else if (/^NET\/Socket\s*:\s*Using\s/.test(msg)) {
      for (const d of msg.matchAll(SOCKET_DEV)) if (!o.socketInterfaces.includes(d[1]!)) o.socketInterfaces.push(d[1]!);
    } else if ((v = CHANNEL.exec(msg))) channel(key, v[1]!);
    else if ((v = /\bnNodes (\d+)\b/.exec(msg))) {
      // `comm 0x… rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 0` (2.20+): an MNNVL clique counts as one
      // node, so MNNVL 0 with several nodes means the network carries what crosses them
      const nodes = Number(v[1]);
      o.nNodes = Math.max(o.nNodes ?? 0, nodes);
      const mn = /\bMNNVL ([01])\b/.exec(msg)?.[1];
      if (mn === "1") o.mnnvl = true;
      else if (mn === "0" && nodes > 1) o.mnnvl ??= false;
    } else if (/^MNNVL 1 cliqueId/.test(msg)) o.mnnvl = true;
    else if (/^NCCL_MNNVL_ENABLE set by environment to 0/.test(msg)) o.mnnvl ??= false;
    if (/Init COMPLETE/.test(msg)) o.initComplete++;
    if (/^NVLS comm\b|^NVLS Head\b|^Connected NVLS/.test(msg)) o.nvls = true;
  }

  return {
    feed,
    /** Each line of a chunk of text. */
    feedText(text: string) {
      for (const l of text.split("\n")) feed(l);
    },
    observation: (): NcclObservation => o,
  };
}

/** Reads a whole log. */
export function parseNcclLog(text: string): NcclObservation {
  const r = createNcclReader();
  r.feedText(text);
  return r.observation();
}
