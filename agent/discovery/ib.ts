// InfiniBand / RoCE adapters from /sys/class/infiniband: pure parsers of the sysfs values plus one reader of the tree.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Hca } from "../../shared/schemas/hca.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { defined } from "./objects.js";

type DiscoveryError = Inventory["errors"][number];
type HcaPort = Hca["ports"][number];

const SOURCE = "/sys/class/infiniband";
const byName = new Intl.Collator("en", { numeric: true }).compare;

/** Reads a port state or physical state (`4: ACTIVE` → `ACTIVE`, `5: LinkUp` → `LinkUp`). */
export function parsePortState(s: string): string {
  const v = s.trim();
  return /^\d+:\s*(.+)$/.exec(v)?.[1] ?? v;
}

/** Reads a port rate in Gb/s (`400 Gb/sec (4X NDR)` → 400), or undefined when it is not one. */
export function parseRateGbps(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*Gb\/sec\b/.exec(s.trim());
  return m ? Number(m[1]) : undefined;
}

/** The subnet prefix (first 64 bits) of a GID; undefined for the all-zero GID or anything that is not a GID. */
export function gidPrefix(gid: string): string | undefined {
  const v = gid.trim().toLowerCase();
  if (!/^[0-9a-f]{4}(:[0-9a-f]{4}){7}$/.test(v) || /^[0:]+$/.test(v)) return undefined;
  return v.split(":").slice(0, 4).join(":");
}

/** Reads a port's `sm_lid` (`0x1` → 1; the kernel writes it in hex), or undefined when it is not a 16-bit LID. */
export function parseSmLid(s: string): number | undefined {
  const v = s.trim().toLowerCase();
  const n = /^0x[0-9a-f]{1,4}$/.test(v) ? Number.parseInt(v.slice(2), 16) : /^\d{1,5}$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) && n <= 0xffff ? n : undefined;
}

const errno = (e: unknown) => (e as NodeJS.ErrnoException | undefined)?.code;

/** One trimmed sysfs value; undefined when the attribute is absent or the device does not report it. */
async function value(path: string, max = 64): Promise<string | undefined> {
  try {
    const v = (await readFile(path, "utf8")).trim();
    return v ? v.slice(0, max) : undefined;
  } catch (e) {
    // sysfs answers EINVAL / ENODATA to reads of attributes a port cannot report (e.g. `rate` on a link that is down).
    if (["ENOENT", "EINVAL", "ENODATA"].includes(errno(e) ?? "")) return undefined;
    throw e;
  }
}

async function readPort(dir: string, port: number): Promise<HcaPort | undefined> {
  const state = await value(join(dir, "state"), 32);
  // Without a state file the entry is not a port the kernel created; it is left out rather than invented.
  if (state === undefined) return undefined;
  const [phys, rate, linkLayer, gid, smLid] = await Promise.all(
    ["phys_state", "rate", "link_layer", "gids/0", "sm_lid"].map((f) => value(join(dir, f))),
  );
  return defined({
    port,
    state: parsePortState(state),
    physState: phys === undefined ? undefined : parsePortState(phys).slice(0, 32),
    rateGbps: rate === undefined ? undefined : parseRateGbps(rate),
    linkLayer: linkLayer?.slice(0, 32),
    gidPrefix: gid === undefined ? undefined : gidPrefix(gid),
    smLid: smLid === undefined ? undefined : parseSmLid(smLid),
  });
}

async function readPorts(dir: string): Promise<HcaPort[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if (errno(e) === "ENOENT") return [];
    throw e;
  }
  const numbers = names
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((n) => n >= 1 && n <= 255);
  const ports = await Promise.all(numbers.sort((a, b) => a - b).map((n) => readPort(join(dir, String(n)), n)));
  return ports.filter((p): p is HcaPort => p !== undefined).slice(0, 16);
}

function numaNode(s: string | undefined): number | null | undefined {
  if (s === undefined || !/^-?\d+$/.test(s)) return undefined;
  return Number(s) < 0 ? null : Number(s);
}

async function readHca(root: string, name: string): Promise<Hca> {
  const dir = join(root, name);
  const [hcaType, fwVersion, boardId, numa] = await Promise.all(
    ["hca_type", "fw_ver", "board_id", "device/numa_node"].map((f) => value(join(dir, f))),
  );
  const ports = await readPorts(join(dir, "ports"));
  return defined({ name: name.slice(0, 64), hcaType, fwVersion, boardId, numaNode: numaNode(numa), ports });
}

/** Says why a path could not be read, in words an operator can act on. */
function failure(source: string, path: string, e: unknown): DiscoveryError {
  const code = errno(e);
  const why =
    code === "EACCES" || code === "EPERM"
      ? "permission denied"
      : code === "ENOTDIR"
        ? "not a directory"
        : e instanceof Error
          ? e.message.split(",")[0] // Node's "EIO: i/o error, open '<path>'": the path is given once, in front
          : String(e);
  const where = (e as NodeJS.ErrnoException | undefined)?.path ?? path;
  return { source: source.slice(0, 64), message: `${where}: ${why}`.slice(0, 2048) };
}

/** Reads every adapter under `root` (normally /sys/class/infiniband); a missing root means no InfiniBand. */
export async function readInfiniband(root: string): Promise<{ hcas: Hca[]; errors: DiscoveryError[] }> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (e) {
    if (errno(e) === "ENOENT") return { hcas: [], errors: [] };
    return { hcas: [], errors: [failure(SOURCE, root, e)] };
  }
  const hcas: Hca[] = [];
  const errors: DiscoveryError[] = [];
  const results = await Promise.allSettled(names.sort(byName).map((n) => readHca(root, n)));
  results.forEach((r, i) => {
    if (r.status === "fulfilled") hcas.push(r.value);
    else errors.push(failure(`${SOURCE}/${names[i]}`, join(root, names[i]!), r.reason));
  });
  return { hcas, errors };
}
