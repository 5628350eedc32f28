// Host facts: pure parsers of os-release, cpuinfo, meminfo and mounts, and the thin readers around them.
import { readdir, readFile, stat, statfs } from "node:fs/promises";
import { arch, release } from "node:os";
import { join, resolve } from "node:path";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { defined, errorMessage } from "./objects.js";

type Host = Inventory["host"];
type Storage = Inventory["storage"][number];
type Weights = Inventory["weights"][number];

/** File systems every node of a cluster typically sees the same way. */
const SHARED_FS =
  /^(nfs4?|lustre|gpfs|cephfs|ceph|beegfs|cifs|smb3|glusterfs|fuse\.(juicefs|glusterfs|s3fs|gcsfuse|sshfs|ceph-fuse)|wekafs|panfs|9p|virtiofs)$/;

/** `ID`, `VERSION_ID`, `VERSION_CODENAME` of /etc/os-release. */
export function parseOsRelease(text: string): Pick<Host, "osId" | "osVersion" | "osCodename"> {
  const kv = Object.fromEntries(
    text
      .split("\n")
      .map((l) => /^([A-Z_]+)=(.*)$/.exec(l.trim()))
      .filter((m): m is RegExpExecArray => !!m)
      .map((m) => [m[1]!, m[2]!.replace(/^["']|["']$/g, "")]),
  );
  return defined({ osId: kv.ID, osVersion: kv.VERSION_ID, osCodename: kv.VERSION_CODENAME || kv.UBUNTU_CODENAME });
}

/** CPU model, logical CPU count and flags (x86 `flags`, Arm `Features`) from /proc/cpuinfo. */
export function parseCpuinfo(text: string): Pick<Host, "cpuModel" | "cpuCount" | "cpuFlags"> {
  const lines = text.split("\n");
  const pairs = lines.map(
    (l) => [l.slice(0, Math.max(0, l.indexOf(":"))).trim(), l.slice(l.indexOf(":") + 1).trim()] as const,
  );
  const field = (name: RegExp) => pairs.find(([k]) => name.test(k))?.[1];
  const count = lines.filter((l) => /^processor\s*:/.test(l)).length;
  const flags = (field(/^(flags|Features)$/) ?? "").split(/\s+/).filter(Boolean).sort();
  return defined({ cpuModel: field(/^(model name|Model)$/), cpuCount: count || undefined, cpuFlags: flags });
}

/** Total and available memory in MiB from /proc/meminfo. */
export function parseMeminfo(text: string): Inventory["memory"] {
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
  const total = kib("MemTotal");
  if (!Number.isFinite(total)) throw new Error("/proc/meminfo: no MemTotal line");
  const available = kib("MemAvailable");
  return defined({
    totalMiB: Math.round(total / 1024),
    availableMiB: Number.isFinite(available) ? Math.round(available / 1024) : undefined,
  });
}

export type Mount = { mountPoint: string; fsType: string };

/** Mount points and file system types from /proc/mounts (octal escapes decoded). */
export function parseMounts(text: string): Mount[] {
  return text
    .split("\n")
    .map((l) => l.split(" "))
    .filter((f) => f.length >= 3)
    .map((f) => ({
      mountPoint: f[1]!.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))),
      fsType: f[2]!,
    }));
}

/** The file system type a path lives on: the longest mount point that contains it. */
export function fsTypeOf(path: string, mounts: Mount[]): string | undefined {
  const p = resolve(path);
  const within = mounts.filter(
    (m) => p === m.mountPoint || p.startsWith(m.mountPoint.endsWith("/") ? m.mountPoint : `${m.mountPoint}/`),
  );
  // The last mount on a mount point is the visible one (an autofs trigger is listed before the NFS mount on top of it).
  return within.reverse().sort((a, b) => b.mountPoint.length - a.mountPoint.length)[0]?.fsType;
}

/** True for network and cluster file systems (NFS, Lustre, …). */
export const isSharedFs = (fsType: string | undefined) => !!fsType && SHARED_FS.test(fsType);

type Errors = { source: string; message: string }[];

/**
 * Reads host facts and memory under `root` (normally "/"); a file that cannot be read is an error, the rest is kept.
 */
export async function readHost(root: string, errors: Errors): Promise<{ host: Host; memory: Inventory["memory"] }> {
  const read = async (path: string) => {
    try {
      return await readFile(join(root, path), "utf8");
    } catch (e) {
      errors.push({ source: `/${path}`, message: errorMessage(e) });
      return undefined;
    }
  };
  const [os, cpu, mem] = await Promise.all([read("etc/os-release"), read("proc/cpuinfo"), read("proc/meminfo")]);
  let memory: Inventory["memory"] = { totalMiB: 0 };
  try {
    if (mem !== undefined) memory = parseMeminfo(mem);
  } catch (e) {
    errors.push({ source: "/proc/meminfo", message: errorMessage(e) });
  }
  const host: Host = {
    arch: arch() === "x64" ? "x86_64" : arch() === "arm64" ? "aarch64" : arch(),
    kernel: release(),
    cpuFlags: [],
    ...(os ? parseOsRelease(os) : {}),
    ...(cpu ? parseCpuinfo(cpu) : {}),
  };
  return { host, memory };
}

/** Free and total space of each storage path, marked shared when on a network file system. */
export async function readStorage(paths: string[], mounts: Mount[], errors: Errors): Promise<Storage[]> {
  const out: Storage[] = [];
  for (const path of paths) {
    try {
      const s = await statfs(path);
      const fsType = fsTypeOf(path, mounts);
      out.push(
        defined({
          path,
          freeBytes: s.bavail * s.bsize,
          totalBytes: s.blocks * s.bsize,
          shared: isSharedFs(fsType),
          fsType,
        }),
      );
    } catch (e) {
      errors.push({ source: `storage ${path}`, message: errorMessage(e) });
    }
  }
  return out;
}

/** Total size of the regular files under a directory (symlinks not followed). */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) total += await sizeOf(p);
    else if (entry.isFile()) total += (await stat(p)).size;
  }
  return total;
}

/** Local weights: each directory directly under a weights dir, with its size. */
export async function readWeights(dirs: string[], mounts: Mount[], errors: Errors): Promise<Weights[]> {
  const out: Weights[] = [];
  for (const dir of dirs) {
    try {
      const shared = isSharedFs(fsTypeOf(dir, mounts));
      for (const e of (await readdir(dir, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .sort((a, b) => a.name.localeCompare(b.name))) {
        out.push({ path: join(dir, e.name), sizeBytes: await sizeOf(join(dir, e.name)), shared });
      }
    } catch (e) {
      errors.push({ source: `weights ${dir}`, message: errorMessage(e) });
    }
  }
  return out;
}

/** Mounts from /proc/mounts under `root`; none (and no error) where the file does not exist. */
export async function readMounts(root: string): Promise<Mount[]> {
  return parseMounts(await readFile(join(root, "proc/mounts"), "utf8").catch(() => ""));
}
