import type { Gpu } from "./schemas/gpu.js";

/** True for a MIG instance class (`a100-80g-mig-3g.40gb`). */
export function isMigClass(cls: string): boolean {
  return cls.includes("-mig-");
}

/** The card class of a MIG class (`a100-80g-mig-3g.40gb` → `a100-80g`); the class itself otherwise. */
export function cardClassOf(cls: string): string {
  const at = cls.indexOf("-mig-");
  return at < 0 ? cls : cls.slice(0, at);
}

const DROPPED = new Set(["nvidia", "tesla", "geforce", "quadro"]);
const STOP = [/^\d+gb$/, /^sxm\d*$/, /^pcie$/, /^hbm\w*$/, /^nvl\d*$/];

/**
 * Class of a whole GPU from its marketing name and memory (docs/install.md, class names):
 * "NVIDIA H100 80GB HBM3", 81559 MiB → "h100-80g".
 */
export function gpuClass(name: string, memoryMiB: number): string {
  const kept: string[] = [];
  for (const raw of name.toLowerCase().split(/[\s\-_/]+/)) {
    const token = raw.replace(/[^a-z0-9.]/g, "");
    if (!token || DROPPED.has(token)) continue;
    if (STOP.some((re) => re.test(token))) break;
    kept.push(token);
  }
  const base = kept.length ? kept.join("-") : "gpu";
  return `${base}-${Math.round(memoryMiB / 1024)}g`;
}

/** Class of a MIG instance: "<card class>-mig-<profile>", the profile as `nvidia-smi -L` prints it. */
export function migClass(cardClass: string, profile: string): string {
  return `${cardClass}-mig-${profile.toLowerCase()}`;
}

/** How every view names a device: GPU "3", MIG instance "3/mig1". */
export function deviceLabel(card: number, migIndex?: number): string {
  return migIndex === undefined ? String(card) : `${card}/mig${migIndex}`;
}

/** Number placement gives a device: the card index, or 1000 + 100 × card + instance for MIG. */
export function deviceNumber(card: number, migIndex?: number): number {
  return migIndex === undefined ? card : 1000 + 100 * card + migIndex;
}

/** The label of a device number: `3`, or `3/mig1` for 1000 + 100 × 3 + 1. */
export function labelOfDeviceNumber(id: number): string {
  return id < 1000 ? deviceLabel(id) : deviceLabel(Math.floor((id - 1000) / 100), (id - 1000) % 100);
}

export type Device = {
  id: number;
  label: string;
  class: string;
  card: number;
  migIndex?: number;
  uuid: string;
  memoryTotalMiB: number;
};

/** True when the card is in MIG mode (or about to be), so it is never placed whole. */
export function inMigMode(gpu: Pick<Gpu, "mig">): boolean {
  const current = gpu.mig?.current?.toLowerCase();
  const pending = gpu.mig?.pending?.toLowerCase();
  return current === "enabled" || pending === "enabled";
}

/** True when the card's MIG mode will change at the next reset: nothing on it may be placed until then. */
export function migChangePending(gpu: Pick<Gpu, "mig">): boolean {
  const { current, pending } = gpu.mig ?? {};
  return pending !== undefined && current?.toLowerCase() !== pending.toLowerCase();
}

/**
 * The devices placement can hand out on a node: whole cards, or each MIG instance of a card in MIG mode.
 * A MIG card with a pending mode change or nothing carved yields none.
 */
export function devicesOf(gpus: readonly Gpu[]): Device[] {
  const out: Device[] = [];
  for (const g of gpus) {
    if (!inMigMode(g)) {
      out.push({
        id: deviceNumber(g.index),
        label: deviceLabel(g.index),
        class: g.class,
        card: g.index,
        uuid: g.uuid,
        memoryTotalMiB: g.memoryTotalMiB,
      });
      continue;
    }
    if (migChangePending(g)) continue;
    for (const m of g.mig?.instances ?? []) {
      if (!m.uuid || !m.profile) continue;
      out.push({
        id: deviceNumber(g.index, m.index),
        label: deviceLabel(g.index, m.index),
        class: m.class ?? migClass(g.class, m.profile),
        card: g.index,
        migIndex: m.index,
        uuid: m.uuid,
        memoryTotalMiB: m.memoryTotalMiB ?? 0,
      });
    }
  }
  return out;
}
