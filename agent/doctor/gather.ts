// The I/O of `llmgw doctor`: discovery as the agent runs it, NVML on its own, the GPUDirect facts and IMEX's peer
// list, and up to three calls to the control plane (GET /healthz; the node-scoped assignments poll with wait=0 to try
// the node token; the node's NVLink peers once the token is accepted). Changes nothing on the node.
import { access, readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Dispatcher } from "undici";
import { NvlinkPeers } from "../../shared/schemas/nvlink-peers.js";
import { ApiCallError, type CallFailure, callJson, createClient } from "../client.js";
import type { AgentConfig } from "../config.js";
import { readImexNodesConfig } from "../discovery/imex-config.js";
import type { Nvml } from "../discovery/nvml.js";
import { loadNvml } from "../discovery/nvml-koffi.js";
import { errorMessage } from "../discovery/objects.js";
import { nodeIdFromHostname, readNodeToken } from "../identity.js";
import { discoveryOf, tlsDispatcher } from "../runtime.js";
import { isSameProcess, pidsInGroups } from "../supervisor/proc.js";
import { readRecords } from "../supervisor/state-files.js";
import type {
  DoctorInput,
  GpuDirectFacts,
  HealthProbe,
  NvmlProbe,
  PeersProbe,
  ServerProbe,
  TokenProbe,
} from "./input.js";

export type GatherOptions = {
  cfg: AgentConfig;
  /** --server, else agent.yaml's. */
  server?: string;
  nvidiaSmi?: string;
  ibRoot?: string;
  /** Where /sys and /proc are read for the GPUDirect facts (normally "/"; tests give a tree of their own). */
  hostRoot?: string;
  timeoutMs?: number;
  /** Loads NVML; injected so tests need no library. */
  loadNvml?: () => Nvml;
  dispatcher?: Dispatcher;
};

/**
 * Pids of the engines recorded in the state dir that still run, and their workers; read-only (no record is removed).
 */
export async function ownEnginePids(stateDir: string): Promise<Set<number>> {
  try {
    const { records } = await readRecords(stateDir);
    return pidsInGroups(new Set(records.filter((r) => isSameProcess(r.pid, r.startTime)).map((r) => r.pid)));
  } catch {
    return new Set(); // an unreadable state dir: every process on a card counts as foreign, the safe reading
  }
}

/** NVML loaded and asked for a snapshot, or why not. */
export function probeNvml(load: () => Nvml): NvmlProbe {
  try {
    const s = load().snapshot();
    return { ok: true, driverVersion: s.driverVersion, gpus: s.gpus.length };
  } catch (e) {
    return { ok: false, error: errorMessage(e).split("\n")[0]! };
  }
}

/** GET <server>/healthz: its version, round trip and `Date` header, with the local time half-way through. */
export async function probeHealth(base: string, dispatcher?: Dispatcher, timeoutMs = 5000): Promise<HealthProbe> {
  const t0 = Date.now();
  try {
    const res = await fetch(`${base}/healthz`, {
      signal: AbortSignal.timeout(timeoutMs),
      ...(dispatcher ? { dispatcher } : {}),
    } as RequestInit);
    const t1 = Date.now();
    // a network-error response (status 0) is no answer at all, however the fetch in use hands it over
    if (res.type === "error" || res.status === 0)
      return { ok: false, error: "GET /healthz: cannot reach it: network error" };
    const text = await res.text();
    if (!res.ok) return { ok: false, error: `GET /healthz: HTTP ${res.status} ${text.slice(0, 120)}`.trim() };
    let version: string | undefined;
    try {
      const v = (JSON.parse(text) as { version?: unknown }).version;
      if (typeof v === "string") version = v;
    } catch {
      return {
        ok: false,
        error: `GET /healthz: the answer is not JSON (is this an llmgw control plane?): ${text.slice(0, 80)}`,
      };
    }
    const date = res.headers.get("date");
    return {
      ok: true,
      rttMs: t1 - t0,
      localMs: (t0 + t1) / 2,
      ...(version ? { version } : {}),
      ...(date ? { serverDate: date } : {}),
    };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (e as Error).name === "TimeoutError"
        ? `no answer within ${timeoutMs} ms`
        : (cause?.code ?? cause?.message ?? errorMessage(e));
    return { ok: false, error: `GET /healthz: cannot reach it: ${why}` };
  }
}

/** The node token of the state dir tried with the assignments poll (wait=0: answers at once, no heartbeat sent). */
export async function probeToken(o: {
  base: string;
  cfg: AgentConfig;
  reachable: boolean;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
}): Promise<TokenProbe> {
  let token: string | undefined;
  try {
    token = await readNodeToken(o.cfg.stateDir);
  } catch (e) {
    return { kind: "unreadable", error: (e as NodeJS.ErrnoException).code ?? errorMessage(e) };
  }
  if (!token) return { kind: "none", joinToken: !!(o.cfg.joinToken || o.cfg.joinTokenFile) };
  const nodeId = o.cfg.nodeId ?? nodeIdFromHostname(hostname());
  if (!o.reachable) return { kind: "unchecked", nodeId };
  try {
    await createClient({ server: o.base, dispatcher: o.dispatcher, timeoutMs: o.timeoutMs }).poll(nodeId, 0, 0, token);
    return { kind: "accepted", nodeId };
  } catch (e) {
    if (e instanceof ApiCallError) return { kind: "refused", nodeId, status: e.status, message: e.message };
    return { kind: "refused", nodeId, status: 0, message: errorMessage(e) };
  }
}

/** What GPUDirect RDMA depends on, under `root`: the peer-memory modules, the kernel module's kind, the kernel. */
export async function readGpuDirect(root: string): Promise<GpuDirectFacts> {
  const exists = (path: string) =>
    access(join(root, path)).then(
      () => true,
      () => false,
    );
  const firstLine = (path: string) =>
    readFile(join(root, path), "utf8").then(
      (text) => text.split("\n")[0]!.trim().slice(0, 256) || undefined,
      () => undefined,
    );
  const [peermem, nvPeerMem, driverVersion, kernel] = await Promise.all([
    exists("sys/module/nvidia_peermem"),
    exists("sys/kernel/mm/memory_peers/nv_mem/version"),
    firstLine("proc/driver/nvidia/version"),
    firstLine("proc/sys/kernel/osrelease"),
  ]);
  return { peermem, nvPeerMem, ...(driverVersion ? { driverVersion } : {}), ...(kernel ? { kernel } : {}) };
}

/** How a failed peers call reads in the finding: the call, then why. */
function peersFailure(f: CallFailure): Error {
  const why =
    f.kind === "unreachable"
      ? `cannot reach it: ${f.why}`
      : f.kind === "refused"
        ? `HTTP ${f.status}${f.status === 404 ? " (a control plane older than this agent?)" : `: ${f.problem?.detail ?? f.text.slice(0, 120)}`}`
        : f.kind === "not_json"
          ? `HTTP ${f.status} with a body that is not JSON`
          : `unexpected answer (${f.issue})`;
  return new Error(`${f.what}: ${why}`);
}

/** GET …/nvlink-peers with the node token: the addresses the control plane sees in this node's NVLink domain. */
export async function probePeers(o: {
  base: string;
  nodeId: string;
  token: string;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
}): Promise<PeersProbe> {
  try {
    const path = `/api/v1/agents/${encodeURIComponent(o.nodeId)}/nvlink-peers`;
    const call = { base: o.base, method: "GET", path, token: o.token, timeoutMs: o.timeoutMs ?? 5000 };
    const { data } = await callJson({ ...call, dispatcher: o.dispatcher }, NvlinkPeers, peersFailure);
    return { ok: true, ...data };
  } catch (e) {
    return { ok: false, error: errorMessage(e) };
  }
}

/** Everything the checks judge. */
export async function gatherDoctorInput(o: GatherOptions): Promise<DoctorInput> {
  const cfg = { ...o.cfg, nvidiaSmi: o.nvidiaSmi ?? o.cfg.nvidiaSmi, ibRoot: o.ibRoot ?? o.cfg.ibRoot };
  const ownPids = await ownEnginePids(cfg.stateDir);
  const serverUrl = (o.server ?? cfg.server)?.replace(/\/+$/, "");
  const serverProbe = async (): Promise<ServerProbe | undefined> => {
    if (!serverUrl) return undefined;
    let dispatcher: Dispatcher | undefined;
    let health: HealthProbe;
    try {
      dispatcher = o.dispatcher ?? (await tlsDispatcher(cfg.tls));
      health = await probeHealth(serverUrl, dispatcher, o.timeoutMs);
    } catch (e) {
      health = { ok: false, error: `agent.yaml tls: ${errorMessage(e)}` };
    }
    const token = await probeToken({ base: serverUrl, cfg, reachable: health.ok, dispatcher, timeoutMs: o.timeoutMs });
    const secret = token.kind === "accepted" ? await readNodeToken(cfg.stateDir).catch(() => undefined) : undefined;
    if (token.kind !== "accepted" || !secret) return { url: serverUrl, health, token };
    const peers = await probePeers({
      base: serverUrl,
      nodeId: token.nodeId,
      token: secret,
      dispatcher,
      timeoutMs: o.timeoutMs,
    });
    return { url: serverUrl, health, token, peers };
  };
  const [inventory, server, imexConfig, gpudirect] = await Promise.all([
    discoveryOf(cfg, () => ownPids)(),
    serverProbe(),
    readImexNodesConfig(cfg.imexNodesConfig),
    readGpuDirect(o.hostRoot ?? "/"),
  ]);
  return {
    inventory,
    config: {
      fabrics: cfg.fabrics,
      nvml: cfg.nvml,
      commandEngine: cfg.runPolicy.allow.includes("command"),
      slowdownC: cfg.slowdownC,
      stateDir: cfg.stateDir,
      imexChannelsDir: cfg.imexChannelsDir,
    },
    ownPids,
    ...(cfg.nvml ? {} : { nvml: probeNvml(o.loadNvml ?? (() => loadNvml())) }),
    ...(server ? { server } : {}),
    imexConfig,
    gpudirect,
  };
}
