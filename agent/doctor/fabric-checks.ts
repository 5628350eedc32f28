// Doctor checks of the node's fabrics: NVLink (through shared/fabric.ts, the rules placement uses), IMEX and
// InfiniBand. Pure functions of the inventory and agent.yaml's `fabrics`.

import { domainEligibility, nodeFabric, notJoinedReason } from "../../shared/fabric.js";
import type { DoctorCheck } from "../../shared/schemas/doctor.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { ranges } from "../inventory.js";
import { type DoctorInput, result } from "./input.js";

type Gpus = Inventory["gpus"];

const FABRIC_FIX =
  "check the fabric manager (`systemctl status nvidia-fabricmanager`; NVLink switch trays: NMX) and `nvidia-smi -q | grep -A10 Fabric`; until the fabric is whole and healthy the node takes no multi-node NVLink replica";
const DEGRADED_FIX =
  "some NVLinks are down: check `nvidia-smi nvlink -s` and the switch trays; a degraded domain is chosen last";

/**
 * "GPU 0 fabric In Progress", "GPU 1 fabric In Progress" → "GPU 0-1 fabric In Progress"; other reasons kept as they
 * are.
 */
function grouped(reasons: string[]): string[] {
  const byWhy = new Map<string, number[]>();
  const out: string[] = [];
  for (const r of reasons) {
    const m = /^GPU (\d+) (.+)$/.exec(r);
    if (!m) out.push(r);
    else byWhy.set(m[2]!, [...(byWhy.get(m[2]!) ?? []), Number(m[1])]);
  }
  return [...out, ...[...byWhy].map(([why, gpus]) => `GPU ${ranges(gpus)} ${why}`)];
}

function degradedNote(gpus: Gpus): string | undefined {
  const f = nodeFabric(gpus);
  if (!f.degraded.length && f.health !== "Limited Capacity") return undefined;
  return `${f.degraded.length ? `GPU ${ranges(f.degraded)} bandwidth Degraded, ` : ""}health ${f.health ?? "not reported"}`;
}

/**
 * Each GPU joined to one NVLink domain with full bandwidth; a single machine's NVSwitch (zero cluster) is no domain.
 */
export function checkNvlinkFabric(inv: Inventory): DoctorCheck {
  const gpus = inv.gpus;
  if (!gpus.length) return result("nvlink-fabric", "skip", "no GPU was read (see the driver check)");
  const f = nodeFabric(gpus);
  if (f.domains.length) {
    // IMEX is judged by its own checks: here only what the cards say.
    const e = domainEligibility(gpus, { state: "ready", channels: 1 });
    const where = f.domains.length === 1 ? `domain ${f.domains[0]}` : "mixed domains";
    if (e.reasons.length)
      return result(
        "nvlink-fabric",
        "fail",
        `${where}: ${f.joined} of ${f.total} GPUs joined; ${grouped(e.reasons).join("; ")}`,
        FABRIC_FIX,
      );
    const degraded = degradedNote(gpus);
    if (degraded)
      return result(
        "nvlink-fabric",
        "warn",
        `${where}: ${f.joined} of ${f.total} GPUs joined, ${degraded}`,
        DEGRADED_FIX,
      );
    return result("nvlink-fabric", "ok", `${where}: all ${f.total} GPUs joined, health ${f.health ?? "not reported"}`);
  }
  // No domain: cards without a fabric, a single machine's NVSwitch (Completed/Success, zero cluster), or a fabric that
  // never finished.
  const none = gpus.filter((g) => !g.fabric || g.fabric.state === "Not Supported");
  const local = gpus.filter((g) => g.fabric?.state === "Completed" && g.fabric.status === "Success");
  const broken = gpus.filter((g) => !none.includes(g) && !local.includes(g));
  if (broken.length)
    return result(
      "nvlink-fabric",
      "fail",
      grouped(broken.map((g) => `GPU ${g.index} ${notJoinedReason(g.fabric)}`)).join("; "),
      FABRIC_FIX,
    );
  if (!local.length)
    return result(
      "nvlink-fabric",
      "ok",
      "no NVLink fabric reported (PCIe cards, or a driver older than 535): not a multi-node domain",
    );
  const degraded = degradedNote(gpus);
  if (degraded) return result("nvlink-fabric", "warn", `single-machine NVSwitch: ${degraded}`, DEGRADED_FIX);
  return result(
    "nvlink-fabric",
    "ok",
    `single-machine NVSwitch (cluster UUID zero) on ${local.length} of ${gpus.length} GPUs: not a multi-node domain`,
  );
}

const IMEX_FIX: Record<string, string> = {
  absent: "install nvidia-imex (the package matching the driver) and `systemctl enable --now nvidia-imex`",
  down: "`systemctl restart nvidia-imex`; see /var/log/nvidia-imex.log and that /etc/nvidia-imex/nodes_config.cfg lists every node of the domain",
  degraded:
    "`nvidia-imex-ctl -N` shows which peers are not connected: start IMEX on them, check /etc/nvidia-imex/nodes_config.cfg",
  unknown:
    "run `nvidia-imex-ctl -q` and `nvidia-imex-ctl -N` by hand: its answer was not understood (see the discovery check)",
};

/** Whether this node is in a multi-node NVLink domain, where IMEX is required. */
const inDomain = (inv: Inventory) => nodeFabric(inv.gpus).domains.length > 0;

/** The IMEX daemon READY and its domain UP — required only in a multi-node NVLink domain. */
export function checkImex(inv: Inventory): DoctorCheck {
  const i = inv.imex;
  const said = `IMEX ${i.state}${i.domainState ? `, domain ${i.domainState}` : ""}${i.version ? `, version ${i.version}` : ""}`;
  if (!inDomain(inv)) return result("imex", "skip", `not needed: the node is in no multi-node NVLink domain (${said})`);
  if (i.state === "ready") return result("imex", "ok", said);
  return result("imex", "fail", `${said}: the domain's GPUs cannot share memory across nodes`, IMEX_FIX[i.state]);
}

/** An IMEX channel (`channel0`) exists — required only in a multi-node NVLink domain. */
export function checkImexChannel(inv: Inventory, channelsDir: string): DoctorCheck {
  const n = inv.imex.channels;
  if (!inDomain(inv))
    return result("imex-channel", "skip", `not needed: the node is in no multi-node NVLink domain (${n} channels)`);
  if (n > 0) return result("imex-channel", "ok", `${n} channel${n === 1 ? "" : "s"} in ${channelsDir}`);
  return result(
    "imex-channel",
    "fail",
    `no IMEX channel in ${channelsDir}`,
    `load the driver with NVreg_CreateImexChannel0=1, or \`mknod ${channelsDir}/channel0 c $(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices) 0\``,
  );
}

const PORT_PROBLEM: Record<string, { what: string; fix: string }> = {
  INIT: {
    what: "INIT: no subnet manager answers",
    fix: "start opensm/UFM (or the switch's subnet manager) on that fabric",
  },
  ARMED: { what: "ARMED: the subnet manager has not activated it", fix: "check the subnet manager's log (opensm/UFM)" },
  DOWN: { what: "DOWN: link down", fix: "check the cable and the switch port (`ibstat`, `ibportstate`)" },
};

/** Every InfiniBand/RoCE port ACTIVE; a bad port of an HCA agent.yaml's `fabrics` names fails, of any other warns. */
export function checkIbPorts(inv: Inventory, fabrics: DoctorInput["config"]["fabrics"]): DoctorCheck {
  if (!inv.hcas.length) {
    return result(
      "ib-ports",
      "warn",
      "no InfiniBand adapter: this node cannot host multi-node replicas outside an NVLink domain",
      "fine for a node that only runs single-node replicas; else check `ibstat` and that the mlx5 driver is loaded",
    );
  }
  const used = new Set(fabrics.flatMap((f) => f.hcas));
  const bad = inv.hcas.flatMap((h) => h.ports.filter((p) => p.state !== "ACTIVE").map((p) => ({ h, p })));
  const ports = inv.hcas.reduce((n, h) => n + h.ports.length, 0);
  if (!bad.length)
    return result(
      "ib-ports",
      "ok",
      `${ports} port${ports === 1 ? "" : "s"} ACTIVE on ${inv.hcas.length} adapter${inv.hcas.length === 1 ? "" : "s"}`,
    );
  const finding = bad.map(({ h, p }) => {
    const what = PORT_PROBLEM[p.state]?.what ?? p.state;
    return `${h.name} port ${p.port} ${what}${p.physState ? ` (phys ${p.physState})` : ""}${used.has(h.name) ? "" : " [in no agent.yaml fabric]"}`;
  });
  const fixes = [...new Set(bad.map(({ p }) => PORT_PROBLEM[p.state]?.fix ?? "check `ibstat`"))];
  return result(
    "ib-ports",
    bad.some(({ h }) => used.has(h.name)) ? "fail" : "warn",
    finding.join("; "),
    fixes.join("; "),
  );
}

/** agent.yaml's `fabrics` name HCAs this node has (fabric identity never comes from the GID prefix). */
export function checkIbFabrics(inv: Inventory, fabrics: DoctorInput["config"]["fabrics"]): DoctorCheck {
  const have = new Set(inv.hcas.map((h) => h.name));
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
  const missing = fabrics.flatMap((f) => f.hcas.filter((h) => !have.has(h)).map((h) => ({ f: f.name, h })));
  if (missing.length) {
    const finding = missing.map((m) => `fabric ${m.f} names ${m.h}, which this node does not have`).join("; ");
    return result(
      "ib-fabrics",
      "fail",
      `${finding} (it has ${[...have].join(", ") || "no adapter"})`,
      "correct `fabrics` in agent.yaml to the names `ls /sys/class/infiniband` shows",
    );
  }
  return result("ib-fabrics", "ok", fabrics.map((f) => `${f.name}: ${f.hcas.join(", ")}`).join("; "));
}

/** The checks of the fabrics, in report order. */
export function fabricChecks(input: DoctorInput): DoctorCheck[] {
  const { inventory: inv, config } = input;
  return [
    checkNvlinkFabric(inv),
    checkImex(inv),
    checkImexChannel(inv, config.imexChannelsDir),
    checkIbPorts(inv, config.fabrics),
    checkIbFabrics(inv, config.fabrics),
  ];
}
