// Which nodes and devices a deployment's profile may use (docs/architecture.md, placement rule 1), kept in stages so a
// reason can say where it ended.
import { isMigClass } from "../../shared/classes.js";
import { migVersionRefusal } from "../../shared/engines.js";
import { isHeld, type Ledger } from "./ledger.js";
import type { PlaceDeployment, PlaceDevice, PlaceNode, PlaceProfile } from "./types.js";

export type Scope = {
  /** Nodes of the deployment's pool. */
  inPool: PlaceNode[];
  /** … whose labels match the nodeSelector. */
  matching: PlaceNode[];
  /** … with the profile's engine installed: the nodes whose state a reason may talk about. */
  withEngine: PlaceNode[];
  /** … that are schedulable and have devices of the profile's class: the candidates. */
  schedulable: PlaceNode[];
};

/** The nodes a deployment's profile may land on, stage by stage; input nodes sorted by id keep every stage sorted. */
export function scopeOf(nodes: readonly PlaceNode[], d: PlaceDeployment, p: PlaceProfile): Scope {
  const inPool = nodes.filter((n) => n.pool === d.pool);
  const selector = Object.entries(d.nodeSelector ?? {});
  const matching = inPool.filter((n) => selector.every(([k, v]) => n.labels[k] === v));
  const withEngine = matching.filter(
    (n) => (p.engine === "command" || n.engines.includes(p.engine)) && !vulkanOnMig(n, p) && !migTooOld(n, p),
  );
  const schedulable = withEngine.filter((n) => n.schedulable && n.devices.some((d) => d.class === p.gpuClass));
  return { inPool, matching, withEngine, schedulable };
}

/** True when the node's build of the profile's engine is Vulkan's and the profile asks for MIG instances it cannot address. */
export function vulkanOnMig(n: PlaceNode, p: PlaceProfile): boolean {
  return n.engineBackends?.[p.engine] === "vulkan" && isMigClass(p.gpuClass);
}

/** Why the node's release of the profile's engine cannot run the profile's MIG class; undefined when it can. */
export function migTooOld(n: PlaceNode, p: PlaceProfile): string | undefined {
  return isMigClass(p.gpuClass) ? migVersionRefusal(p.engine, n.engineVersions?.[p.engine]) : undefined;
}

/** Devices of the class on the node that are healthy and held by no shard, lowest id first. */
export function freeDevices(node: PlaceNode, cls: string, ledger: Ledger): PlaceDevice[] {
  const free: PlaceDevice[] = [];
  let sorted = true;
  for (const d of node.devices) {
    if (d.class !== cls || d.problems.length !== 0 || isHeld(ledger, node.id, d.id)) continue;
    if (free.length && free[free.length - 1]!.id > d.id) sorted = false;
    free.push(d);
  }
  // inventories list devices in id order: sorted only when one does not
  return sorted ? free : free.sort((a, b) => a.id - b.id);
}
