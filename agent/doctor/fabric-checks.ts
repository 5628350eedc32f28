// Doctor checks of the node's fabrics: NVLink (through shared/fabric.ts, the rules placement uses), IMEX and its peer
// list, then InfiniBand (ib-checks.ts). Pure functions of the inventory, agent.yaml and what gather.ts read.

import { domainEligibility, nodeFabric, notJoinedReason } from "../../shared/fabric.js";
import type { DoctorCheck } from "../../shared/schemas/doctor.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import type { ImexNodesConfig } from "../discovery/imex-config.js";
import { ranges } from "../inventory.js";
import { ibChecks } from "./ib-checks.js";
import { type DoctorInput, result, type ServerProbe } from "./input.js";

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

/**
 * nodes_config.cfg lists the nodes the control plane sees in this node's NVLink domain — only in a multi-node domain;
 * without a control plane to ask, only the file itself is judged.
 */
export function checkImexPeers(inv: Inventory, file: ImexNodesConfig, server?: ServerProbe): DoctorCheck {
  if (!inDomain(inv)) return result("imex-peers", "skip", "not needed: the node is in no multi-node NVLink domain");
  const write = `list the address of every node of the NVLink domain in ${file.path}, one per line and the same file on every node, then \`systemctl restart nvidia-imex\` (elsewhere: set \`imex_nodes_config\` in agent.yaml)`;
  if (file.kind === "absent")
    return inv.imex.state === "absent"
      ? result("imex-peers", "skip", `no ${file.path}, and IMEX is not installed (see the imex check)`)
      : result("imex-peers", "warn", `IMEX is ${inv.imex.state} but ${file.path} does not exist`, write);
  if (file.kind === "unreadable")
    return result(
      "imex-peers",
      "warn",
      `cannot read ${file.path}: ${file.error}`,
      "run doctor as the agent's user (or root)",
    );
  const n = file.addresses.length;
  if (!n) return result("imex-peers", "warn", `${file.path} lists no address`, write);
  const lists = `${file.path} lists ${n} address${n === 1 ? "" : "es"}`;
  const peers = server?.peers;
  if (!server) return result("imex-peers", "ok", `${lists} (no control plane configured to compare with)`);
  if (!peers) return result("imex-peers", "ok", `${lists} (not compared: the node token was not accepted)`);
  if (!peers.ok) return result("imex-peers", "ok", `${lists} (not compared: ${peers.error})`);
  if (!peers.domain)
    return result("imex-peers", "ok", `${lists} (not compared: the control plane sees this node in no NVLink domain)`);
  const listed = new Set(file.addresses);
  const seen = new Set(peers.addresses);
  const missing = peers.addresses.filter((a) => !listed.has(a));
  const extra = file.addresses.filter((a) => !seen.has(a));
  if (!missing.length && !extra.length)
    return result(
      "imex-peers",
      "ok",
      `${file.path} lists the ${n} peers the control plane sees in domain ${peers.domain}`,
    );
  const differs = [
    ...(missing.length ? [`missing ${missing.join(", ")}`] : []),
    ...(extra.length ? [`lists ${extra.join(", ")}, which the control plane sees in no node of the domain`] : []),
  ];
  return result(
    "imex-peers",
    "warn",
    `${file.path} differs from the ${peers.addresses.length} nodes the control plane sees in domain ${peers.domain}: ${differs.join("; ")}`,
    `${write}; the control plane's view is each node's mgmt_addr, and a list kept per NVLink partition or per job on purpose differs by design`,
  );
}

/** The checks of the fabrics, in report order. */
export function fabricChecks(input: DoctorInput): DoctorCheck[] {
  const { inventory: inv, config } = input;
  return [
    checkNvlinkFabric(inv),
    checkImex(inv),
    checkImexChannel(inv, config.imexChannelsDir),
    checkImexPeers(inv, input.imexConfig, input.server),
    ...ibChecks(input),
  ];
}
