import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultAgentConfig, loadAgentConfig, parseAgentConfig } from "../../agent/config.js";
import { DEFAULT_PROBES } from "../../agent/discovery/engines.js";
import { pythonDistVersion } from "../../agent/engines/common.js";

/** The message parseAgentConfig throws for `text`. */
function failure(text: string, source?: string): string {
  try {
    parseAgentConfig(text, source);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected parseAgentConfig to throw");
}

const DEFAULTS = {
  labels: {},
  fabrics: [],
  stateDir: "/var/lib/llmgw",
  portRange: { first: 20000, last: 20999 },
  weightsDirs: [],
  storagePaths: [],
  engineProbes: DEFAULT_PROBES,
  nvidiaSmi: "nvidia-smi",
  nvml: false,
  ibRoot: "/sys/class/infiniband",
  imexCtl: "nvidia-imex-ctl",
  imexChannelsDir: "/dev/nvidia-caps-imex-channels",
  imexNodesConfig: "/etc/nvidia-imex/nodes_config.cfg",
  classOverrides: {},
  slowdownC: 87,
};

describe("parseAgentConfig", () => {
  it.each([
    ["an empty file", ""],
    ["only comments", "# agent.yaml\n# nothing set yet\n"],
    ["an empty document", "---\n"],
  ])("gives every default for %s", (_, text) => {
    const c = parseAgentConfig(text);
    expect(c).toMatchObject(DEFAULTS);
    expect(c.engineProbes).toEqual(DEFAULT_PROBES);
    expect(c.server).toBeUndefined();
    expect(c.joinToken).toBeUndefined();
    expect(c.nodeId).toBeUndefined();
    expect(c.tls).toBeUndefined();
  });

  it("matches defaultAgentConfig", () => {
    expect(parseAgentConfig("")).toEqual(defaultAgentConfig());
  });

  it("turns a full snake_case file into the camelCase config", () => {
    const text = `
server: https://llmgw.example.com:8443
join_token: jt_0123456789abcdef
join_token_file: /etc/llmgw/join-token
node_id: gpu-node-01.rack12
hostname: gpu-node-01.lab
mgmt_addr: 10.0.0.11
mgmt_interface: eth0
labels:
  pool: prod
  rack: r12
tls:
  ca_file: /etc/llmgw/ca.pem
  cert_file: /etc/llmgw/node.pem
  key_file: /etc/llmgw/node.key
fabrics:
  - name: ib-east
    hcas: [mlx5_0, mlx5_1]
  - name: ib-west
    hcas: [mlx5_4]
state_dir: /srv/llmgw
port_range: {first: 30000, last: 30099}
weights_dirs: [/models, /scratch/models]
storage_paths:
  - /models
engines:
  vllm:
    probe: [/opt/vllm/bin/vllm, --version]
  llamacpp:
    probe: [/usr/local/bin/llama-server, --version]
    backend: vulkan
  sglang:
    command: [/opt/sglang/bin/python, -m, sglang.launch_server]
bind_host: 10.0.0.11
restart_limit: 3
restart_base_s: 1
restart_max_s: 60
stop_grace_s: 5
drain_timeout_s: 10
adopt_grace_s: 30
log_max_mib: 8
check_interval_s: 5
nvidia_smi: /usr/bin/nvidia-smi
nvml: true
ib_root: /host/sys/class/infiniband
imex_ctl: /usr/bin/nvidia-imex-ctl
imex_channels_dir: /host/dev/nvidia-caps-imex-channels
imex_nodes_config: /host/etc/nvidia-imex/nodes_config.cfg
class_overrides:
  GPU-4a2c9f7e-0d5b-4c1e-9a6f-2e8d7c3b1a90: h100-80g-spare
temperature_slowdown_c: 90
`;
    expect(parseAgentConfig(text)).toEqual({
      server: "https://llmgw.example.com:8443",
      joinToken: "jt_0123456789abcdef",
      joinTokenFile: "/etc/llmgw/join-token",
      nodeId: "gpu-node-01.rack12",
      hostname: "gpu-node-01.lab",
      mgmtAddr: "10.0.0.11",
      mgmtInterface: "eth0",
      labels: { pool: "prod", rack: "r12" },
      tls: {
        caFile: "/etc/llmgw/ca.pem",
        certFile: "/etc/llmgw/node.pem",
        keyFile: "/etc/llmgw/node.key",
        insecure: false,
      },
      fabrics: [
        { name: "ib-east", hcas: ["mlx5_0", "mlx5_1"] },
        { name: "ib-west", hcas: ["mlx5_4"] },
      ],
      stateDir: "/srv/llmgw",
      portRange: { first: 30000, last: 30099 },
      weightsDirs: ["/models", "/scratch/models"],
      storagePaths: ["/models"],
      // in the registry's order, whatever the file's
      engineProbes: [
        { engine: "vllm", command: ["/opt/vllm/bin/vllm", "--version"] },
        { engine: "sglang", command: pythonDistVersion("sglang") },
        { engine: "llamacpp", command: ["/usr/local/bin/llama-server", "--version"] },
      ],
      engineOptions: {
        vllm: { probe: ["/opt/vllm/bin/vllm", "--version"] },
        llamacpp: { probe: ["/usr/local/bin/llama-server", "--version"], backend: "vulkan" },
        sglang: { command: ["/opt/sglang/bin/python", "-m", "sglang.launch_server"] },
      },
      bindHost: "10.0.0.11",
      restartLimit: 3,
      runPolicy: { allow: ["vllm", "sglang", "llamacpp", "trtllm"], envAllow: [] },
      runAs: undefined,
      restartBackoff: { baseMs: 1000, maxMs: 60_000 },
      stopGraceMs: 5000,
      drainTimeoutMs: 10_000,
      adoptGraceMs: 30_000,
      logMaxBytes: 8 * 1024 * 1024,
      checkIntervalMs: 5000,
      nvidiaSmi: "/usr/bin/nvidia-smi",
      nvml: true,
      ibRoot: "/host/sys/class/infiniband",
      imexCtl: "/usr/bin/nvidia-imex-ctl",
      imexChannelsDir: "/host/dev/nvidia-caps-imex-channels",
      imexNodesConfig: "/host/etc/nvidia-imex/nodes_config.cfg",
      classOverrides: { "GPU-4a2c9f7e-0d5b-4c1e-9a6f-2e8d7c3b1a90": "h100-80g-spare" },
      slowdownC: 90,
    });
  });

  it("accepts a one-port range and tls insecure", () => {
    const c = parseAgentConfig("port_range: {first: 20000, last: 20000}\ntls: {insecure: true}\n");
    expect(c.portRange).toEqual({ first: 20000, last: 20000 });
    expect(c.tls).toEqual({ caFile: undefined, certFile: undefined, keyFile: undefined, insecure: true });
  });

  it("probes nothing when engines is an empty map", () => {
    expect(parseAgentConfig("engines: {}\n").engineProbes).toEqual([]);
  });

  it.each([
    ["an unclosed flow sequence", "server: [unclosed\n"],
    ["a bad indent", "a: 1\n  b: 2\n"],
    ["a duplicated key", "state_dir: /a\nstate_dir: /b\n"],
  ])("says the file is not valid YAML for %s", (_, text) => {
    const m = failure(text);
    expect(m.startsWith("agent.yaml: not valid YAML: ")).toBe(true);
    expect(m).not.toContain("\n");
  });

  it("lists every bad key at once, each by its path", () => {
    const m = failure(`
nvidia_smi_path: /usr/bin/nvidia-smi
nvml: "yes"
port_range: {first: 30000, last: 20000}
fabrics:
  - name: ib-east
    hcas: []
  - name: ib-west
tls: {ca: /etc/ca.pem}
server: not-a-url
`);
    const lines = m.split("\n");
    expect(lines[0]).toBe("agent.yaml: invalid configuration:");
    const body = lines.slice(1).map((l) => l.trim());
    expect(body).toHaveLength(7);
    expect(body).toContain("nvidia_smi_path: unknown key");
    expect(body).toContain("tls.ca: unknown key");
    expect(body).toContain("port_range: first must not exceed last");
    expect(body.find((l) => l.startsWith("nvml: "))).toMatch(/boolean/);
    expect(body.find((l) => l.startsWith("fabrics.0.hcas: "))).toMatch(/>=1/);
    expect(body.find((l) => l.startsWith("fabrics.1.hcas: "))).toMatch(/expected array/);
    expect(body.find((l) => l.startsWith("server: "))).toMatch(/URL/i);
  });

  it.each([
    ["a port below 1024", "port_range: {first: 80, last: 20000}\n", "port_range.first: "],
    ["a fractional port", "port_range: {first: 20000.5, last: 20999}\n", "port_range.first: "],
    ["a bad node id", "node_id: -leading-dash\n", "node_id: "],
    ["a bad class override", "class_overrides: {GPU-1: H100 Spare}\n", "class_overrides.GPU-1: "],
    ["an unknown engine", "engines:\n  tgi: {}\n", "engines.tgi: unknown key"],
    ["an unknown llama.cpp backend", "engines:\n  llamacpp: {backend: metal}\n", "engines.llamacpp.backend: "],
    ["a negative restart limit", "restart_limit: -1\n", "restart_limit: "],
    ["an empty state dir", "state_dir: ''\n", "state_dir: "],
    ["a slowdown temperature out of range", "temperature_slowdown_c: 300\n", "temperature_slowdown_c: "],
  ])("names the key for %s", (_, text, prefix) => {
    const body = failure(text)
      .split("\n")
      .slice(1)
      .map((l) => l.trim());
    expect(body).toHaveLength(1);
    expect(body[0]!.startsWith(prefix)).toBe(true);
  });

  it("says so when the file is not a mapping", () => {
    expect(failure("- a\n- b\n")).toMatch(/^agent\.yaml: invalid configuration:\n {2}\(top level\): .*object/);
  });

  it("names the given source in every message", () => {
    expect(failure("server: [unclosed\n", "/etc/llmgw/agent.yaml")).toMatch(
      /^\/etc\/llmgw\/agent\.yaml: not valid YAML: /,
    );
    expect(failure("bogus: 1\n", "/etc/llmgw/agent.yaml")).toBe(
      "/etc/llmgw/agent.yaml: invalid configuration:\n  bogus: unknown key",
    );
  });
});

describe("loadAgentConfig", () => {
  it("reads the file and names its path in errors", async () => {
    const dir = await mkdtemp(join(tmpdir(), "llmgw-config-"));
    try {
      const good = join(dir, "good.yaml");
      const bad = join(dir, "bad.yaml");
      await writeFile(good, "state_dir: /srv/llmgw\n");
      await writeFile(bad, "statedir: /srv/llmgw\n");
      expect((await loadAgentConfig(good)).stateDir).toBe("/srv/llmgw");
      await expect(loadAgentConfig(bad)).rejects.toThrow(`${bad}: invalid configuration:\n  statedir: unknown key`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
