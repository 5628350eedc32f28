// What the benches print of the machine's CPUs: /proc/stat's counters read as busy, steal and other work.
import { describe, expect, it } from "vitest";
import { cpuShares, parseCpuLine } from "../../bench/machine.js";

describe("parseCpuLine", () => {
  it("reads busy, steal and all time from /proc/stat's first line (guest time is inside user already)", () => {
    // user nice system idle iowait irq softirq steal guest guest_nice
    expect(parseCpuLine("cpu  100 5 20 800 10 3 2 60 40 0")).toEqual({ busy: 130, steal: 60, total: 1000 });
  });

  it("takes a kernel without the steal column as no steal", () => {
    expect(parseCpuLine("cpu 10 0 10 80 0 0 0")).toEqual({ busy: 20, steal: 0, total: 100 });
  });
});

describe("cpuShares", () => {
  const before = { busy: 1_000, steal: 100, total: 10_000 };
  it("splits the busy time into the benchmark's processes and other work, with the hypervisor's steal", () => {
    // 2 CPUs for 1 s: 200 ticks in all, 120 busy and 20 stolen; the benchmark used 0.8 s of CPU (40 % of 2 CPUs)
    const s = cpuShares(before, { busy: 1_120, steal: 120, total: 10_200 }, 800, 1_000, 2);
    expect(s).toEqual({ busy: 60, ours: 40, read: 40, other: 20, steal: 10, over: false });
  });

  it("never counts the benchmark for more than the machine was busy, and says when its counters read more", () => {
    // counters read a moment apart: under a point over, nothing to say
    expect(cpuShares(before, { busy: 1_050, steal: 100, total: 10_200 }, 505, 1_000, 2)).toMatchObject({
      busy: 25,
      ours: 25,
      other: 0,
      over: false,
    });
    // twice what the machine did (a unit slip): cut, and said
    expect(cpuShares(before, { busy: 1_050, steal: 100, total: 10_200 }, 1_000, 1_000, 2)).toMatchObject({
      busy: 25,
      ours: 25,
      other: 0,
      over: true,
    });
  });

  it("says nothing where no time passed or /proc/stat could not be read at the start", () => {
    expect(cpuShares(before, before, 0, 1_000, 2)).toBeUndefined();
    // zeros at the start would make the shares cover everything since boot
    expect(cpuShares({ busy: 0, steal: 0, total: 0 }, before, 0, 1_000, 2)).toBeUndefined();
  });
});
