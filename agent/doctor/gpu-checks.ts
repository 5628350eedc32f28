// Doctor checks of the driver and the cards: pure functions of the inventory discovery made.
import { inMigMode, migChangePending } from "../../shared/classes.js";
import type { DoctorCheck } from "../../shared/schemas/doctor.js";
import type { Gpu } from "../../shared/schemas/gpu.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { DEFAULT_SLOWDOWN_C, overTemperature } from "../discovery/gpus.js";
import { type DoctorInput, type NvmlProbe, result } from "./input.js";

const SMI_SOURCE = "nvidia-smi -q -x";
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const noGpus = (id: string, inv: Inventory) =>
  inv.gpus.length ? undefined : result(id, "skip", "no GPU was read (see the driver check)");

/** nvidia-smi is there and the driver answers: its version and how many GPUs it reports. */
export function checkDriver(inv: Inventory): DoctorCheck {
  if (inv.gpuSource === "none") return result("driver", "skip", "GPU discovery was skipped");
  if (inv.gpuSource === "unavailable") {
    const why = inv.errors.find((e) => e.source === SMI_SOURCE)?.message ?? "no GPU source answered";
    const fix = /not found/.test(why)
      ? "install the NVIDIA driver (it brings nvidia-smi), or point --nvidia-smi / agent.yaml `nvidia_smi` at it"
      : "the driver does not answer: check `dmesg | grep -i nvrm` and `lsmod | grep nvidia`; reboot after a driver upgrade";
    return result("driver", "fail", why, fix);
  }
  const g = inv.gpus[0];
  if (!g)
    return result(
      "driver",
      "fail",
      `${inv.gpuSource} answered but reports no GPU`,
      "check `lspci | grep -i nvidia` and that the cards are not bound to another driver (vfio)",
    );
  const driver = inv.host.nvidiaDriver ?? g.driverVersion ?? "version not reported";
  return result(
    "driver",
    "ok",
    `driver ${driver}${g.cudaVersion ? ` (CUDA ${g.cudaVersion})` : ""}: ${plural(inv.gpus.length, "GPU")} via ${inv.gpuSource}`,
  );
}

/** NVML is optional: fine when it loads, a warning only when agent.yaml asks for it and it fails. */
export function checkNvml(inv: Inventory, wanted: boolean, probe?: NvmlProbe): DoctorCheck {
  if (wanted) {
    if (inv.gpuSource === "nvml")
      return result("nvml", "ok", `NVML answers: ${plural(inv.gpus.length, "GPU")} (agent.yaml nvml: true)`);
    const why = inv.errors.find((e) => e.source === "nvml")?.message ?? "NVML was not used";
    return result(
      "nvml",
      "warn",
      `agent.yaml asks for NVML, but: ${why}`,
      "install the driver's libnvidia-ml.so.1 (nvidia-utils), or set `nvml: false`; GPUs are read with nvidia-smi meanwhile",
    );
  }
  if (!probe) return result("nvml", "skip", "not probed");
  if (probe.ok)
    return result(
      "nvml",
      "ok",
      `NVML answers: driver ${probe.driverVersion}, ${plural(probe.gpus, "GPU")} (optional; agent.yaml reads GPUs with nvidia-smi)`,
    );
  return result("nvml", "skip", `NVML not loadable (optional; GPUs are read with nvidia-smi): ${probe.error}`);
}

/** Uncorrectable ECC errors since the driver loaded: such a card is never placed on. */
export function checkEcc(inv: Inventory): DoctorCheck {
  const skip = noGpus("gpu-ecc", inv);
  if (skip) return skip;
  const bad = inv.gpus.filter((g) => (g.health.eccUncorrectableVolatile ?? 0) > 0);
  if (bad.length) {
    const finding = bad
      .map(
        (g) => `GPU ${g.index}: ${g.health.eccUncorrectableVolatile} uncorrectable ECC errors since the driver loaded`,
      )
      .join("; ");
    return result(
      "gpu-ecc",
      "fail",
      finding,
      `drain the node, then reset the card (nvidia-smi -r -i ${bad.map((g) => g.index).join(",")}) or reboot; if errors come back, replace it`,
    );
  }
  const reported = inv.gpus.filter((g) => g.health.eccUncorrectableVolatile !== undefined);
  if (!reported.length) return result("gpu-ecc", "ok", "ECC not reported (cards without ECC, or ECC disabled)");
  const past = inv.gpus.filter((g) => (g.health.eccUncorrectableAggregate ?? 0) > 0);
  const history = past.length
    ? `; earlier in their lifetime: ${past.map((g) => `GPU ${g.index} ${g.health.eccUncorrectableAggregate}`).join(", ")}`
    : "";
  return result(
    "gpu-ecc",
    "ok",
    `no uncorrectable ECC error on ${plural(reported.length, "GPU")} since the driver loaded${history}`,
  );
}

/** Retired pages or remapped rows waiting for a reset: the card must be reset before it is used. */
export function checkMemoryRepair(inv: Inventory): DoctorCheck {
  const skip = noGpus("gpu-memory-repair", inv);
  if (skip) return skip;
  const bad = inv.gpus.flatMap((g) => [
    ...(g.health.retiredPagesPending ? [{ g, what: "page retirement" }] : []),
    ...(g.health.remappedRowsPending ? [{ g, what: "row remapping" }] : []),
  ]);
  if (!bad.length) return result("gpu-memory-repair", "ok", "no page retirement or row remapping pending");
  const cards = [...new Set(bad.map((b) => b.g.index))];
  return result(
    "gpu-memory-repair",
    "fail",
    bad.map((b) => `GPU ${b.g.index}: ${b.what} pending`).join("; "),
    `drain the node, then reset the card to apply it (nvidia-smi -r -i ${cards.join(",")}) or reboot`,
  );
}

/**
 * Each card's temperature against its slowdown temperature (its own, else `slowdownC`): the rule that makes placement
 * leave a hot card alone (overTemperature).
 */
export function checkTemperature(inv: Inventory, slowdownC = DEFAULT_SLOWDOWN_C): DoctorCheck {
  const skip = noGpus("gpu-temperature", inv);
  if (skip) return skip;
  const read = inv.gpus.filter(
    (g): g is Gpu & { health: { temperatureC: number } } => g.health.temperatureC !== undefined,
  );
  if (!read.length) return result("gpu-temperature", "skip", "no card reports its temperature");
  const hot = read.flatMap((g) => {
    const why = overTemperature(g, slowdownC);
    return why ? [`GPU ${g.index} ${why}`] : [];
  });
  if (hot.length) {
    return result(
      "gpu-temperature",
      "warn",
      `${hot.join("; ")}: not placed on while so hot`,
      "check the fans, air flow and inlet temperature (`nvidia-smi -q -d TEMPERATURE,PERFORMANCE` shows thermal slowdown)",
    );
  }
  const hottest = read.reduce((a, b) => (b.health.temperatureC > a.health.temperatureC ? b : a));
  return result("gpu-temperature", "ok", `hottest: GPU ${hottest.index} at ${hottest.health.temperatureC} °C`);
}

/**
 * Processes on the cards that are not llmgw's engines (discovery already left those out): such cards are not placed on.
 */
export function checkProcesses(inv: Inventory, ownPids: ReadonlySet<number> = new Set()): DoctorCheck {
  const skip = noGpus("gpu-processes", inv);
  if (skip) return skip;
  const busy = inv.gpus
    .map((g) => ({
      g,
      procs: [...g.health.processes, ...(g.mig?.instances.flatMap((m) => m.processes) ?? [])].filter(
        (p) => !ownPids.has(p.pid),
      ),
    }))
    .filter((x) => x.procs.length);
  if (!busy.length) return result("gpu-processes", "ok", "no other process on the GPUs");
  return result(
    "gpu-processes",
    "warn",
    busy
      .map(({ g, procs }) => `GPU ${g.index} used by ${procs.map((p) => `${p.name ?? "?"} (pid ${p.pid})`).join(", ")}`)
      .join("; "),
    "stop them (or leave the cards to them): a card another process uses is never placed on",
  );
}

/**
 * Each card's MIG mode and instances; warns where nothing can run (nothing carved, or a mode change waiting for a
 * reset).
 */
export function checkMig(inv: Inventory): DoctorCheck {
  const skip = noGpus("mig", inv);
  if (skip) return skip;
  const mig = inv.gpus.filter((g) => inMigMode(g) || migChangePending(g));
  if (!mig.length) return result("mig", "ok", "no card in MIG mode");
  const problems: string[] = [];
  const fixes: string[] = [];
  const fine: string[] = [];
  for (const g of mig) {
    const m = g.mig!;
    if (migChangePending(g)) {
      problems.push(
        `GPU ${g.index}: MIG mode change pending (${m.current} → ${m.pending}): nothing runs on it until a reset`,
      );
      fixes.push(`drain, then reset GPU ${g.index} (nvidia-smi -r -i ${g.index}) or reboot`);
    } else if (!m.instances.length) {
      problems.push(`GPU ${g.index}: MIG enabled but no instance carved: nothing runs on it`);
      fixes.push(
        `carve instances (nvidia-smi mig -i ${g.index} -cgi <profiles> -C) or disable MIG (nvidia-smi -i ${g.index} -mig 0)`,
      );
    } else {
      const profiles = new Map<string, number>();
      for (const i of m.instances)
        profiles.set(i.profile ?? "unnamed", (profiles.get(i.profile ?? "unnamed") ?? 0) + 1);
      fine.push(
        `GPU ${g.index}: ${plural(m.instances.length, "instance")} (${[...profiles].map(([p, n]) => `${p} × ${n}`).join(", ")})`,
      );
    }
  }
  if (problems.length) return result("mig", "warn", [...problems, ...fine].join("; "), fixes.join("; "));
  return result("mig", "ok", `MIG on ${fine.join("; ")}`);
}

/** The checks of the driver and the cards, in report order. */
export function gpuChecks(input: DoctorInput): DoctorCheck[] {
  const inv = input.inventory;
  return [
    checkDriver(inv),
    checkNvml(inv, input.config.nvml, input.nvml),
    checkEcc(inv),
    checkMemoryRepair(inv),
    checkTemperature(inv, input.config.slowdownC),
    checkProcesses(inv, input.ownPids),
    checkMig(inv),
  ];
}
