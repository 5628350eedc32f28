// Doctor checks of the InfiniBand path NCCL takes between nodes: every port up with a subnet manager, each fabric of
// agent.yaml usable on this node, and GPUDirect RDMA (the HCAs reading GPU memory directly). Pure functions of the
// inventory, agent.yaml's `fabrics` and the GPUDirect facts gather.ts read.
import type { DoctorCheck } from "../../shared/schemas/doctor.js";
import type { Hca } from "../../shared/schemas/hca.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { type DoctorInput, type GpuDirectFacts, result } from "./input.js";

type Port = Hca["ports"][number];
type Fabrics = DoctorInput["config"]["fabrics"];

const SM_FIX =
  "start opensm/UFM on that fabric (`systemctl enable --now opensm` on one node attached to it) or check the subnet manager of its managed switch; `sminfo` says whether one answers";

const PORT_PROBLEM: Record<string, { what: string; fix: string }> = {
  INIT: { what: "INIT: no subnet manager answers", fix: SM_FIX },
  ARMED: { what: "ARMED: the subnet manager has not activated it", fix: "check the subnet manager's log (opensm/UFM)" },
  DOWN: { what: "DOWN: link down", fix: "check the cable and the switch port (`ibstat`, `ibportstate`)" },
};

/**
 * What is wrong with a port, or undefined when it can carry traffic: not ACTIVE, or an InfiniBand port whose `sm_lid`
 * is 0 (no subnet manager answered; a RoCE port always reads 0 and needs none).
 */
export function portProblem(p: Port): { what: string; fix: string } | undefined {
  if (p.state === "ACTIVE")
    return p.smLid === 0 && p.linkLayer !== "Ethernet"
      ? { what: "ACTIVE but sm_lid 0: no subnet manager answers", fix: SM_FIX }
      : undefined;
  return PORT_PROBLEM[p.state] ?? { what: p.state, fix: "check `ibstat`" };
}

const portText = (h: Hca, p: Port, what: string) =>
  `${h.name} port ${p.port} ${what}${p.physState ? ` (phys ${p.physState})` : ""}`;

/** Every InfiniBand/RoCE port ACTIVE; a bad port of an HCA agent.yaml's `fabrics` names fails, of any other warns. */
export function checkIbPorts(inv: Inventory, fabrics: Fabrics): DoctorCheck {
  if (!inv.hcas.length) {
    return result(
      "ib-ports",
      "warn",
      "no InfiniBand adapter: this node cannot host multi-node replicas outside an NVLink domain",
      "fine for a node that only runs single-node replicas; else check `ibstat` and that the mlx5 driver is loaded",
    );
  }
  const used = new Set(fabrics.flatMap((f) => f.hcas));
  const bad = inv.hcas.flatMap((h) =>
    h.ports.flatMap((p) => {
      const problem = portProblem(p);
      return problem ? [{ h, p, problem }] : [];
    }),
  );
  const ports = inv.hcas.reduce((n, h) => n + h.ports.length, 0);
  if (!bad.length)
    return result(
      "ib-ports",
      "ok",
      `${ports} port${ports === 1 ? "" : "s"} ACTIVE on ${inv.hcas.length} adapter${inv.hcas.length === 1 ? "" : "s"}`,
    );
  const finding = bad.map(
    ({ h, p, problem }) => `${portText(h, p, problem.what)}${used.has(h.name) ? "" : " [in no agent.yaml fabric]"}`,
  );
  return result(
    "ib-ports",
    bad.some(({ h }) => used.has(h.name)) ? "fail" : "warn",
    finding.join("; "),
    [...new Set(bad.map(({ problem }) => problem.fix))].join("; "),
  );
}

/** "mlx5_0 port 1 ACTIVE, subnet manager at LID 0x1" for the ports of a fabric's HCA that can carry traffic. */
function goodPorts(h: Hca): string {
  return h.ports
    .filter((p) => !portProblem(p))
    .map(
      (p) =>
        `${h.name} port ${p.port} ACTIVE${p.linkLayer === "Ethernet" ? " (RoCE)" : p.smLid ? `, subnet manager at LID 0x${p.smLid.toString(16)}` : ""}`,
    )
    .join(", ");
}

/**
 * Each fabric agent.yaml names is usable here: every HCA it lists present, with a port ACTIVE that a subnet manager
 * answered (fabric identity never comes from the GID prefix).
 */
export function checkIbFabrics(inv: Inventory, fabrics: Fabrics): DoctorCheck {
  const byName = new Map(inv.hcas.map((h) => [h.name, h]));
  if (!fabrics.length) {
    const ib = inv.hcas.filter((h) => h.ports.some((p) => p.linkLayer === "InfiniBand")).map((h) => h.name);
    if (!ib.length)
      return result(
        "ib-fabrics",
        "skip",
        "agent.yaml names no InfiniBand fabric and the node has no InfiniBand adapter",
      );
    return result(
      "ib-fabrics",
      "warn",
      `agent.yaml names no fabric: ${ib.join(", ")} are not used for multi-node placement`,
      "add `fabrics: [{name: <fabric>, hcas: [...]}]` to agent.yaml, with the same name on every node of that fabric",
    );
  }
  const problems: string[] = [];
  const fixes: string[] = [];
  const missing = fabrics.flatMap((f) => f.hcas.filter((h) => !byName.has(h)).map((h) => ({ f: f.name, h })));
  if (missing.length) {
    const finding = missing.map((m) => `fabric ${m.f} names ${m.h}, which this node does not have`).join("; ");
    problems.push(`${finding} (it has ${[...byName.keys()].join(", ") || "no adapter"})`);
    fixes.push("correct `fabrics` in agent.yaml to the names `ls /sys/class/infiniband` shows");
  }
  for (const f of fabrics)
    for (const h of f.hcas.flatMap((name) => byName.get(name) ?? [])) {
      if (h.ports.some((p) => !portProblem(p))) continue;
      if (!h.ports.length) problems.push(`fabric ${f.name}: ${h.name} has no port`);
      for (const p of h.ports) {
        const problem = portProblem(p)!;
        problems.push(`fabric ${f.name}: ${portText(h, p, problem.what)}`);
        fixes.push(problem.fix);
      }
    }
  if (problems.length)
    return result("ib-fabrics", "fail", problems.join("; "), [...new Set(fixes)].join("; ") || "check `ibstat`");
  const ok = fabrics.map((f) => `${f.name}: ${f.hcas.map((name) => goodPorts(byName.get(name)!)).join(", ")}`);
  return result("ib-fabrics", "ok", ok.join("; "));
}

/** Whether a kernel release (`6.8.0-45-generic`) is at least `major.minor`; undefined when it is not one. */
export function kernelAtLeast(release: string | undefined, major: number, minor: number): boolean | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release ?? "");
  if (!m) return undefined;
  return Number(m[1]) > major || (Number(m[1]) === major && Number(m[2]) >= minor);
}

/** `/proc/driver/nvidia/version` names the open kernel module ("NVIDIA UNIX Open Kernel Module for x86_64 …"). */
export const isOpenKernelModule = (line: string | undefined) => /\bOpen Kernel Module\b/.test(line ?? "");

const GDR_FIX =
  "`modprobe nvidia_peermem` (and list it in /etc/modules-load.d/ so it loads at boot), or use the NVIDIA open kernel module on Linux 5.12 or newer (dma-buf)";

/**
 * GPUDirect RDMA is possible: nvidia_peermem (or the older nv_peer_mem) loaded, or dma-buf (the open kernel module on
 * Linux 5.12+). Only where agent.yaml names an InfiniBand fabric and the node has GPUs.
 */
export function checkGpudirectRdma(inv: Inventory, fabrics: Fabrics, gdr: GpuDirectFacts): DoctorCheck {
  if (!fabrics.length)
    return result("gpudirect-rdma", "skip", "agent.yaml names no InfiniBand fabric: NCCL does not go over one here");
  if (!inv.gpus.length) return result("gpudirect-rdma", "skip", "no GPU was read (see the driver check)");
  const direct = "the HCAs read and write GPU memory directly (GPUDirect RDMA)";
  if (gdr.peermem) return result("gpudirect-rdma", "ok", `nvidia_peermem loaded: ${direct}`);
  if (gdr.nvPeerMem) return result("gpudirect-rdma", "ok", `nv_peer_mem loaded (the older module): ${direct}`);
  const open = isOpenKernelModule(gdr.driverVersion);
  const recent = kernelAtLeast(gdr.kernel, 5, 12);
  if (open && recent) return result("gpudirect-rdma", "ok", `dma-buf: open kernel module on Linux ${gdr.kernel}`);
  const why = !gdr.driverVersion
    ? "/proc/driver/nvidia/version could not be read"
    : !open
      ? "the proprietary kernel module has no dma-buf"
      : recent === false
        ? `Linux ${gdr.kernel} is older than 5.12`
        : "the kernel release is not known";
  return result(
    "gpudirect-rdma",
    "warn",
    `no nvidia_peermem module and no dma-buf (${why}): NCCL will move data through host memory (InfiniBand without GPUDirect RDMA), which is slower`,
    GDR_FIX,
  );
}

/** The checks of the InfiniBand path, in report order. */
export function ibChecks(input: DoctorInput): DoctorCheck[] {
  const { inventory: inv, config } = input;
  return [
    checkIbPorts(inv, config.fabrics),
    checkIbFabrics(inv, config.fabrics),
    checkGpudirectRdma(inv, config.fabrics, input.gpudirect),
  ];
}
