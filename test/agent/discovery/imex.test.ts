import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunResult } from "../../../agent/discovery/exec.js";
import {
  type ImexDomain,
  imexState,
  parseImexDomain,
  parseImexQuery,
  readImex,
} from "../../../agent/discovery/imex.js";
import { DiscoveryError, Imex } from "../../../shared/schemas/inventory.js";
import { fixture } from "../../helpers/inventory.js";

const CRAFTED_JSON = "imex/CRAFTED-N-j-2node.json";
const GH200_2NODE = [
  { index: 0, addr: "10.136.206.47", status: "READY" },
  { index: 1, addr: "10.136.206.48", status: "READY" },
];
const P6E_ADDRS = [
  "172.31.48.81",
  "172.31.48.98",
  "172.31.48.221",
  "172.31.49.228",
  "172.31.50.39",
  "172.31.50.44",
  "172.31.51.66",
  "172.31.51.157",
  "172.31.52.239",
  "172.31.53.80",
  "172.31.54.95",
  "172.31.54.183",
  "172.31.54.203",
  "172.31.54.241",
  "172.31.55.59",
  "172.31.55.187",
  "172.31.55.197",
  "172.31.56.47",
];

describe("parseImexQuery", () => {
  it.each([
    ["READY\n", "ready"],
    ["UNAVAILABLE\n", "down"],
    ["NOT_READY", "down"],
    ["WAITING_FOR_PEERS\n", "down"],
    ["DEGRADED\n", "degraded"],
  ])("%j -> %s", (text, want) => expect(parseImexQuery(text)).toBe(want));

  it("reads the real GH200 capture", () => {
    expect(parseImexQuery(fixture("imex/gh200-q-ready-jpsnips.txt"))).toBe("ready");
  });

  it.each(["", "  \n", "Connection refused\n", "ready"])("throws on %j, naming the source", (text) => {
    expect(() => parseImexQuery(text)).toThrow(/^nvidia-imex-ctl -q: /);
  });
});

describe("parseImexDomain on real captures", () => {
  it.each<[string, ImexDomain]>([
    [
      "gh200-1node-N-570-noversion-jpsnips.txt",
      { domainState: "UP", nodes: [{ index: 0, addr: "10.136.206.48", status: "READY" }] },
    ],
    ["gh200-2node-N-570-noversion-jpsnips.txt", { domainState: "UP", nodes: GH200_2NODE }],
    ["gh200-2node-q-N-s-sequence-jpsnips.txt", { domainState: "UP", nodes: GH200_2NODE }],
    ["gb200-18node-N-TAIL8-sirius-hostfacts.txt", { domainState: "UP", nodes: [] }],
    [
      "p6e-gb200-18node-N-570.172-version-col-TRANSCRIBED-awsdocs.txt",
      {
        domainState: "UP",
        nodes: P6E_ADDRS.map((addr, index) => ({ index, addr, status: "READY", version: "570.172" })),
      },
    ],
  ])("%s", (file, want) => expect(parseImexDomain(fixture(`imex/${file}`))).toEqual(want));

  it("stops at the first `Domain State:` line", () => {
    const text = `${fixture("imex/gh200-2node-N-570-noversion-jpsnips.txt")}Node #2   - 10.136.206.49   - UNAVAILABLE\nDomain State: DOWN\n`;
    expect(parseImexDomain(text)).toEqual({ domainState: "UP", nodes: GH200_2NODE });
  });

  it("throws on a `-q` answer, which has neither node list nor domain state", () => {
    expect(() => parseImexDomain(fixture("imex/gh200-q-ready-jpsnips.txt"))).toThrow(/^nvidia-imex-ctl -N: /);
  });
});

describe("parseImexDomain on JSON (-N -j; shape inferred, no real capture)", () => {
  it("reads the crafted two-node answer", () => {
    expect(parseImexDomain(fixture(CRAFTED_JSON))).toEqual({
      domainState: "UP",
      nodes: [
        { index: 0, addr: "10.0.0.1", status: "READY", version: "580.95.05" },
        { index: 1, addr: "10.0.0.2", status: "READY", version: "580.95.05" },
      ],
    });
  });

  it("accepts a node array and other spellings of the domain state", () => {
    const text = JSON.stringify({
      domainStatus: "DEGRADED",
      nodes: [
        { hostName: "gpu-a", state: "UNAVAILABLE" },
        { ip: "10.0.0.9", status: "READY" },
      ],
    });
    expect(parseImexDomain(text)).toEqual({
      domainState: "DEGRADED",
      nodes: [
        { index: 0, addr: "gpu-a", status: "UNAVAILABLE" },
        { index: 1, addr: "10.0.0.9", status: "READY" },
      ],
    });
    expect(parseImexDomain('{"domain_state":"DOWN"}')).toEqual({ domainState: "DOWN", nodes: [] });
  });

  it.each(["", "hello\n", "{ not json", "[]", "{}", "Node #0 - 10.0.0.1\n"])(
    "throws on %j, naming the source",
    (text) => {
      expect(() => parseImexDomain(text)).toThrow(/^nvidia-imex-ctl -N: /);
    },
  );
});

describe("imexState", () => {
  const d = (domainState?: string): ImexDomain => ({ ...(domainState ? { domainState } : {}), nodes: [] });
  it.each<[Parameters<typeof imexState>[0], ImexDomain | undefined, string]>([
    ["ready", undefined, "ready"],
    ["ready", d(), "ready"],
    ["ready", d("UP"), "ready"],
    // a DEGRADED domain means some peer is down: this node's READY daemon stays ready (the peer is what is out)
    ["ready", d("DEGRADED"), "ready"],
    ["ready", d("DOWN"), "down"],
    ["ready", d("SOMETHING_NEW"), "unknown"],
    ["degraded", d("UP"), "degraded"],
    ["degraded", d("DOWN"), "down"],
    ["down", d("UP"), "down"],
    ["absent", undefined, "absent"],
    ["unknown", d("UP"), "unknown"],
  ])("%s with domain %j -> %s", (q, dom, want) => expect(imexState(q, dom)).toBe(want));
});

describe("readImex", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "llmgw-imex-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A fake `run` answering by the first argument, recording its calls. */
  function fake(answers: Record<string, () => Promise<RunResult>>) {
    const calls: [string, string[], number][] = [];
    const run = (cmd: string, args: string[], timeoutMs: number) => {
      calls.push([cmd, args, timeoutMs]);
      return answers[args.join(" ")]!();
    };
    return { run, calls };
  }
  const fail =
    (error: string, missing = false) =>
    () =>
      Promise.resolve<RunResult>({ ok: false, missing, error });
  const ok = (text: string) => () => Promise.resolve<RunResult>({ ok: true, stdout: text, stderr: "" });
  const valid = (r: Awaited<ReturnType<typeof readImex>>) => {
    expect(Imex.parse(r.imex)).toEqual(r.imex);
    for (const e of r.errors) expect(DiscoveryError.parse(e)).toEqual(e);
  };

  it("reports a ready daemon, its domain, version and one channel", async () => {
    await writeFile(join(dir, "channel0"), "");
    await writeFile(join(dir, "README"), "");
    const { run, calls } = fake({
      "-q": ok(fixture("imex/gh200-q-ready-jpsnips.txt")),
      "-N -j": ok(fixture(CRAFTED_JSON)),
    });
    const r = await readImex({ channelsDir: dir, run });
    expect(r).toEqual({ imex: { state: "ready", domainState: "UP", channels: 1, version: "580.95.05" }, errors: [] });
    expect(calls).toEqual([
      ["nvidia-imex-ctl", ["-q"], 3000],
      ["nvidia-imex-ctl", ["-N", "-j"], 3000],
    ]);
    valid(r);
  });

  it("falls back to the text table when -j gives text", async () => {
    const { run } = fake({
      "-q": ok("READY\n"),
      "-N -j": ok(fixture("imex/p6e-gb200-18node-N-570.172-version-col-TRANSCRIBED-awsdocs.txt")),
    });
    const r = await readImex({ channelsDir: join(dir, "none"), run });
    expect(r).toEqual({ imex: { state: "ready", domainState: "UP", channels: 0, version: "570.172" }, errors: [] });
  });

  it("reads a missing binary as no IMEX, without an error", async () => {
    const { run } = fake({
      "-q": fail("nvidia-imex-ctl -q: not found", true),
      "-N -j": fail("nvidia-imex-ctl -N -j: not found", true),
    });
    expect(await readImex({ channelsDir: join(dir, "none"), run })).toEqual({
      imex: { state: "absent", channels: 0 },
      errors: [],
    });
  });

  it("reports a timeout as unknown, naming the source", async () => {
    const { run } = fake({
      "-q": fail("nvidia-imex-ctl -q: no answer within 500 ms"),
      "-N -j": fail("nvidia-imex-ctl -N -j: no answer within 500 ms"),
    });
    const r = await readImex({ channelsDir: join(dir, "none"), timeoutMs: 500, run });
    expect(r).toEqual({
      imex: { state: "unknown", channels: 0 },
      errors: [{ source: "nvidia-imex-ctl -q", message: "nvidia-imex-ctl -q: no answer within 500 ms" }],
    });
    valid(r);
  });

  it("reports a failed run as unknown, naming the source", async () => {
    const { run } = fake({
      "-q": fail("nvidia-imex-ctl -q: exited with status 255: cannot read node config"),
      "-N -j": ok(""),
    });
    const r = await readImex({ channelsDir: join(dir, "none"), run });
    expect(r.imex).toEqual({ state: "unknown", channels: 0 });
    expect(r.errors).toEqual([
      { source: "nvidia-imex-ctl -q", message: "nvidia-imex-ctl -q: exited with status 255: cannot read node config" },
    ]);
  });

  it("reports garbage from -q as unknown", async () => {
    const { run } = fake({ "-q": ok("Segmentation fault\n"), "-N -j": ok(fixture(CRAFTED_JSON)) });
    const r = await readImex({ channelsDir: join(dir, "none"), run });
    expect(r.imex).toEqual({ state: "unknown", channels: 0 });
    expect(r.errors).toEqual([
      { source: "nvidia-imex-ctl -q", message: expect.stringMatching(/^nvidia-imex-ctl -q: unexpected output/) },
    ]);
    valid(r);
  });

  it("keeps the daemon's word when the domain cannot be read, and says why", async () => {
    const { run } = fake({ "-q": ok("READY\n"), "-N -j": ok("garbage\n") });
    const r = await readImex({ channelsDir: join(dir, "none"), run });
    expect(r.imex).toEqual({ state: "ready", channels: 0 });
    expect(r.errors).toEqual([
      { source: "nvidia-imex-ctl -N -j", message: expect.stringMatching(/^nvidia-imex-ctl -N: /) },
    ]);
  });

  it("reads a degraded domain (its own daemon READY: ready) and leaves out disagreeing versions", async () => {
    const domain = JSON.stringify({
      status: "DEGRADED",
      nodes: {
        "0": { host: "10.0.0.1", status: "READY", version: "580.95.05" },
        "1": { host: "10.0.0.2", status: "READY", version: "580.82.07" },
      },
    });
    const { run } = fake({ "-q": ok("READY\n"), "-N -j": ok(domain) });
    expect(await readImex({ channelsDir: join(dir, "none"), run })).toEqual({
      imex: { state: "ready", domainState: "DEGRADED", channels: 0 },
      errors: [],
    });
  });

  it("runs the real binary through execa: missing, answering, and too slow", async () => {
    expect(await readImex({ ctl: join(dir, "no-such-ctl"), channelsDir: dir })).toEqual({
      imex: { state: "absent", channels: 0 },
      errors: [],
    });
    const ctl = join(dir, "fake-ctl");
    await writeFile(
      ctl,
      '#!/bin/sh\nif [ "$1" = "-q" ]; then echo READY; else echo \'{"status":"UP","nodes":{}}\'; fi\n',
    );
    await chmod(ctl, 0o755);
    expect(await readImex({ ctl, channelsDir: dir })).toEqual({
      imex: { state: "ready", domainState: "UP", channels: 0 },
      errors: [],
    });
    await writeFile(ctl, "#!/bin/sh\nexec sleep 5\n"); // exec: a child left holding stdout would outlive the kill
    const r = await readImex({ ctl, channelsDir: dir, timeoutMs: 200 });
    expect(r.imex).toEqual({ state: "unknown", channels: 0 });
    expect(r.errors).toEqual([{ source: "nvidia-imex-ctl -q", message: `${ctl} -q: no answer within 200 ms` }]);
  });
});
