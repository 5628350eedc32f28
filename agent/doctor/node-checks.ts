// Doctor checks of the rest of the node: engines, sources discovery could not read, and the control plane (reach,
// node token, clock skew). Pure functions of the inventory and the probes gather.ts made.
import type { DoctorCheck } from "../../shared/schemas/doctor.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { VERSION } from "../../shared/version.js";
import { type DoctorInput, result, type ServerProbe } from "./input.js";

/** A clock further than this from the control plane's is reported. */
export const CLOCK_SKEW_WARN_S = 5;

/** Sources other checks already report on. */
const JUDGED_ELSEWHERE = new Set(["nvidia-smi -q -x", "nvml", "agent.yaml fabrics"]);

/** The engines found and their versions; warns when none is (the `command` engine needs no probe). */
export function checkEngines(inv: Inventory, commandEngine: boolean): DoctorCheck {
  const found = Object.entries(inv.engines.versions).map(([e, v]) => `${e} ${v}`);
  if (commandEngine) found.push("command (from agent.yaml)");
  const slow = Object.entries(inv.engines.warnings ?? {});
  const absent = inv.engines.probed.filter((e) => inv.engines.versions[e] === undefined && !inv.engines.warnings?.[e]);
  const notFound = absent.length ? `; not found: ${absent.join(", ")}` : "";
  if (slow.length)
    return result(
      "engines",
      "warn",
      `${[...found, ...slow.map(([e, w]) => `${e}: ${w}`)].join("; ")}${notFound}`,
      "give the engine a faster version probe in agent.yaml `engines.<engine>.probe` (its distribution's metadata), or check what slows the node",
    );
  if (found.length) return result("engines", "ok", `${found.join(", ")}${notFound}`);
  return result(
    "engines",
    "warn",
    inv.engines.probed.length
      ? `no inference engine found (probed ${inv.engines.probed.join(", ")})`
      : "no engine probed (agent.yaml `engines` lists none)",
    "install an engine where the agent's PATH finds it (e.g. `pip install vllm`), or give its version probe in agent.yaml `engines`; until then no profile is placed here",
  );
}

/** Sources discovery could not read and that no other check judges (topology, MIG names, host files, IMEX, sysfs). */
export function checkDiscovery(inv: Inventory): DoctorCheck {
  // Without a driver every nvidia-smi call fails alike: the driver check has said so once.
  const noDriver = inv.gpuSource === "unavailable";
  const errors = inv.errors.filter(
    (e) => !JUDGED_ELSEWHERE.has(e.source) && !(noDriver && e.source.startsWith("nvidia-smi")),
  );
  if (!errors.length)
    return result("discovery", "ok", "every other source read (topology, host, storage, IMEX, InfiniBand)");
  return result(
    "discovery",
    "warn",
    errors.map((e) => `could not read ${e.source}: ${e.message}`).join("; "),
    "`llmgw agent inventory` shows what was read; the node still registers with the rest",
  );
}

/** GET /healthz answers. Skipped when no control plane is configured. */
export function checkControlPlane(server: ServerProbe | undefined): DoctorCheck {
  if (!server)
    return result(
      "control-plane",
      "skip",
      "no control plane configured",
      "set `server` in agent.yaml or pass --server URL",
    );
  const h = server.health;
  if (!h.ok)
    return result(
      "control-plane",
      "fail",
      `${server.url}: ${h.error}`,
      "check the URL, that `llmgw serve` runs there, DNS and firewalls; a private CA goes in agent.yaml `tls.ca_file`",
    );
  const version = h.version
    ? `llmgw ${h.version}${h.version === VERSION ? "" : ` (this node runs ${VERSION})`}`
    : "version not reported";
  return result("control-plane", "ok", `${server.url}/healthz answers in ${Math.round(h.rttMs)} ms: ${version}`);
}

/** The state dir's node token is accepted by a node-scoped call; no token is fine while a join token can register. */
export function checkNodeToken(server: ServerProbe | undefined, stateDir: string): DoctorCheck {
  if (!server) return result("node-token", "skip", "no control plane configured");
  const t = server.token;
  const file = `${stateDir.replace(/\/+$/, "")}/node-token`;
  switch (t.kind) {
    case "unreadable":
      return result(
        "node-token",
        "fail",
        `cannot read ${file}: ${t.error}`,
        "run doctor as the agent's user (or root)",
      );
    case "none":
      return t.joinToken
        ? result("node-token", "skip", `not registered yet (no ${file}): the agent registers with its join token`)
        : result(
            "node-token",
            "fail",
            `no ${file} and no join token in agent.yaml: the agent cannot register`,
            "create a join token (admin: POST /api/v1/join-tokens) and set `join_token_file` in agent.yaml",
          );
    case "unchecked":
      return result("node-token", "skip", `token of node ${t.nodeId} not checked: the control plane did not answer`);
    case "accepted":
      return result("node-token", "ok", `the node token of ${t.nodeId} is accepted`);
    case "refused": {
      const fix =
        t.status === 403
          ? "the token belongs to another node id: set `node_id` in agent.yaml to the node it was issued for, or remove the token file and register anew"
          : t.status === 401
            ? `the control plane does not know this token (node deleted or reset): remove ${file} and let the agent register again with a join token`
            : "look at the control plane's log; run doctor again";
      return result(
        "node-token",
        t.status === 401 || t.status === 403 ? "fail" : "warn",
        `node ${t.nodeId}: ${t.message}`,
        fix,
      );
    }
  }
}

/** The local clock against the control plane's `Date` header (one-second resolution, so half a second is added). */
export function checkClockSkew(server: ServerProbe | undefined, warnS = CLOCK_SKEW_WARN_S): DoctorCheck {
  if (!server) return result("clock-skew", "skip", "no control plane configured");
  const h = server.health;
  if (!h.ok) return result("clock-skew", "skip", "the control plane did not answer");
  const at = h.serverDate === undefined ? NaN : Date.parse(h.serverDate);
  if (Number.isNaN(at)) return result("clock-skew", "skip", "the control plane sent no usable Date header");
  const skewS = (h.localMs - (at + 500)) / 1000;
  const side = skewS > 0 ? "ahead of" : "behind";
  const amount = `${Math.abs(skewS).toFixed(1)} s ${side} the control plane`;
  if (Math.abs(skewS) <= warnS)
    return result(
      "clock-skew",
      "ok",
      `local clock ${Math.abs(skewS) < 1 ? "within 1 s of the control plane" : amount}`,
    );
  return result(
    "clock-skew",
    "warn",
    `local clock ${amount} (warn above ${warnS} s)`,
    "enable time sync: `timedatectl set-ntp true` (chrony or systemd-timesyncd)",
  );
}

/** The checks of engines, discovery and the control plane, in report order. */
export function nodeChecks(input: DoctorInput): DoctorCheck[] {
  const { inventory: inv, config, server } = input;
  return [
    checkEngines(inv, config.commandEngine),
    checkDiscovery(inv),
    checkControlPlane(server),
    checkNodeToken(server, config.stateDir),
    checkClockSkew(server),
  ];
}
