// The sentences of pending reasons, piece by piece.
import { describe, expect, it } from "vitest";
import { classNotes, joinNotes, shortDomain, trayName } from "../../api/placement/notes.js";
import { catalogReason, combineReasons, multiReason, profileReason, scopeReason } from "../../api/placement/reasons.js";
import { scopeOf } from "../../api/placement/scope.js";
import { a100Mig, DOMAIN, deployment, gb200Tray, hgx, MIG_CLASS, model, node, profile } from "./builders.js";

describe("reasons", () => {
  it("cuts domain keys and names trays", () => {
    expect(shortDomain(DOMAIN)).toBe("9f3e….2");
    expect(shortDomain("abc.1")).toBe("abc.1");
    expect(trayName(gb200Tray("t", 3))).toBe("tray 3");
    expect(trayName(hgx("gpu-1"))).toBe("node gpu-1");
  });

  it("counts notes past the limit", () => {
    expect(joinNotes(["a", "b", "c"], 2)).toBe("a, b and 1 more");
    expect(joinNotes(["a"])).toBe("a");
  });

  it.each([
    [
      profile("m", MIG_CLASS, 1, 2, { tp: 2 }),
      "profile m runs on MIG class a100-80g-mig-3g.40gb but has tp 2, nodes 2: a MIG profile needs tp = pp = gpusPerNode = nodes = 1 (a process opens one MIG device; instances have no NVLink)",
    ],
    [profile("z", "h100-80g", 0), "profile z has tp 0, gpusPerNode 0: each must be a whole number of at least 1"],
    [profile("ok", MIG_CLASS), undefined],
  ])("refuses impossible profiles (%#)", (p, want) => {
    expect(profileReason(p)).toBe(want);
  });

  it("says when the catalog has nothing to place", () => {
    const d = deployment("d", "m", 1, { profiles: ["x"] });
    expect(catalogReason(d, undefined, [])).toBe("model m does not exist");
    expect(catalogReason(d, model("m", []), [])).toBe("model m has no profiles");
    expect(catalogReason({ ...d, profiles: [] }, model("m", [profile("p", "x")]), [])).toBe(
      "deployment d allows no profile",
    );
  });

  it("walks pool, selector, engine and class", () => {
    const p = profile("p", "h100-80g", 1);
    const say = (nodes: ReturnType<typeof node>[], sel?: Record<string, string>) =>
      scopeReason(
        scopeOf(nodes, deployment("d", "m", 1, sel ? { nodeSelector: sel } : {}), p),
        deployment("d", "m", 1, sel ? { nodeSelector: sel } : {}),
        p,
      );
    expect(say([])).toBe("no node in pool prod");
    expect(say([hgx("a")], { b: "2", a: "1" })).toBe("no node in pool prod matches nodeSelector a=1,b=2");
    expect(say([hgx("a", { engines: [] })])).toBe("no node in pool prod has engine vllm");
    expect(say([node("a")])).toBe("no node in pool prod with engine vllm has h100-80g");
    expect(say([hgx("a", { schedulable: false })])).toBeUndefined();
  });

  it("names unschedulable nodes, sick devices, bare MIG cards, each only for its class", () => {
    const sick = hgx("gpu-1");
    sick.devices[2] = { ...sick.devices[2]!, problems: ["in use by another process: python (pid 7)"] };
    const nodes = [sick, hgx("gpu-2", { schedulable: false }), a100Mig("mig-1", { carved: false })];
    expect(classNotes(nodes, "h100-80g")).toEqual([
      "GPU 2 on gpu-1: in use by another process: python (pid 7)",
      "node gpu-2 not schedulable",
    ]);
    expect(classNotes(nodes, MIG_CLASS)).toEqual([
      expect.stringMatching(/^card 0 on mig-1: MIG mode is enabled but no instances are carved/),
    ]);
    expect(classNotes(nodes, "a100-80g-mig-1g.10gb")).toHaveLength(1);
    expect(classNotes(nodes, "b200-180g-mig-1g.23gb")).toEqual([]);
  });

  it("tells every tray's trouble in a domain", () => {
    const trays = [
      gb200Tray("t3", 3, { nvlink: { eligible: false, reasons: ["GPU 2 fabric In Progress"] } }),
      gb200Tray("t5", 5, { nvlink: { eligible: false, reasons: ["IMEX down"] } }),
      gb200Tray("t1", 1),
      gb200Tray("t9", 9, { schedulable: false, notSchedulable: "draining" }),
    ];
    const p = profile("p", "gb200-185g", 4, 2);
    const scope = scopeOf(trays, deployment("d", "m", 1), p);
    const fits = scope.schedulable.map((n) => ({
      node: n,
      free: 4,
      set: { devices: n.devices, peers: true, numa: false },
      ports: [8000, 8001],
    }));
    expect(multiReason("gb200-185g", 4, 2, scope, fits)).toBe(
      "needs 2 nodes with 4 free gb200-185g in one NVLink domain; domain 9f3e….2 has 1 eligible: tray 3 GPU 2 fabric In Progress, tray 5 IMEX down, tray 9 draining; no InfiniBand fabric has 2 nodes with 4 free gb200-185g",
    );
  });

  it("gives one reason when every profile says the same", () => {
    expect(
      combineReasons([
        { profile: "a", reason: "x" },
        { profile: "b", reason: "x" },
      ]),
    ).toBe("x");
    expect(
      combineReasons([
        { profile: "a", reason: "x" },
        { profile: "b", reason: "profile b runs …" },
      ]),
    ).toBe("profile a: x; profile b runs …");
  });
});

describe("an engine release that cannot run on MIG", () => {
  const d = deployment("d", "m", 1);
  const onMig = (version?: string) =>
    a100Mig("mig-1", version === undefined ? {} : { engineVersions: { vllm: version } });
  const reason = (version?: string) => {
    const p = profile("mig", MIG_CLASS);
    return scopeReason(scopeOf([onMig(version)], d, p), d, p);
  };

  it("keeps vLLM before 0.24.0 off MIG instances, saying why", () => {
    expect(reason("0.23.1.dev7+g1a2b")).toBe(
      `no node in pool prod can run vllm on MIG class ${MIG_CLASS}: on mig-1 vllm 0.23.1.dev7+g1a2b crashes at start on a MIG instance (before 0.24.0) (upgrade it, or use whole GPUs)`,
    );
    expect(reason("0.10.2+cu128")).toMatch(/crashes at start on a MIG instance/);
  });

  it("lets 0.24.0 and later, and a version it cannot read, use them", () => {
    for (const v of ["0.24.0", "0.29.0", "1.0.0", "unknown", undefined]) expect(reason(v), String(v)).toBeUndefined();
  });

  it("says nothing of MIG for whole GPUs", () => {
    const p = profile("whole", "h100-80g");
    const n = hgx("h", { engineVersions: { vllm: "0.20.0" } });
    expect(scopeOf([n], d, p).withEngine.map((x) => x.id)).toEqual(["h"]);
  });
});
