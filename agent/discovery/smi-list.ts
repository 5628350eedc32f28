// Pure parser of `nvidia-smi -L`: each card's UUID and, for MIG, each instance's profile and UUID.

export type ListedMig = { index: number; profile: string; uuid: string };
export type ListedGpu = { index: number; name: string; uuid: string; mig: ListedMig[] };

const GPU = /^GPU (\d+): (.+?) \(UUID: ([^)]+)\)\s*$/;
const MIG = /^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: ([^)]+)\)\s*$/;

/** Parses `nvidia-smi -L`; throws an Error naming the source on a line it does not understand. */
export function parseSmiList(text: string): ListedGpu[] {
  const gpus: ListedGpu[] = [];
  for (const [n, line] of text.split(/\r?\n/).entries()) {
    if (!line.trim()) continue;
    const g = GPU.exec(line);
    if (g) {
      gpus.push({ index: Number(g[1]), name: g[2]!, uuid: g[3]!, mig: [] });
      continue;
    }
    const m = MIG.exec(line);
    if (m && gpus.length) {
      gpus[gpus.length - 1]!.mig.push({ profile: m[1]!, index: Number(m[2]), uuid: m[3]! });
      continue;
    }
    throw new Error(`nvidia-smi -L: line ${n + 1} not understood: ${JSON.stringify(line.slice(0, 120))}`);
  }
  if (!gpus.length) throw new Error("nvidia-smi -L: no GPU listed");
  return gpus;
}
