import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { NetworkInterfaceInfo } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentConfig, parseAgentConfig } from "../../agent/config.js";
import {
  addressOf,
  nodeIdFromHostname,
  readJoinToken,
  readNodeToken,
  resolveIdentity,
  saveNodeToken,
} from "../../agent/identity.js";
import { NodeId } from "../../shared/schemas/common.js";
import { tempDir } from "../helpers/db.js";

const v4 = (address: string, internal = false): NetworkInterfaceInfo => ({
  address,
  netmask: "255.255.255.0",
  family: "IPv4",
  mac: "00:00:00:00:00:00",
  internal,
  cidr: `${address}/24`,
});
const v6 = (address: string): NetworkInterfaceInfo => ({
  address,
  netmask: "ffff:ffff:ffff:ffff::",
  family: "IPv6",
  mac: "00:00:00:00:00:00",
  internal: false,
  cidr: `${address}/64`,
  scopeid: 0,
});
const IFACES = {
  lo: [v4("127.0.0.1", true)],
  eth0: [v6("fe80::1"), v4("10.0.0.11")],
  ib0: [v4("192.168.50.11")],
  docker0: [],
};

const cfg = (yaml: string): AgentConfig => parseAgentConfig(yaml);

describe("resolveIdentity", () => {
  it.each([
    {
      name: "agent.yaml alone, the rest from the host",
      yaml: "server: https://cp.lab:8080\n",
      flags: {},
      want: {
        server: "https://cp.lab:8080",
        nodeId: "gpu-node-01",
        hostname: "GPU-Node-01.lab.example",
        mgmtAddr: "10.0.0.11",
      },
    },
    {
      name: "flags override agent.yaml",
      yaml: "server: https://cp.lab\nnode_id: from-yaml\nmgmt_addr: 10.9.9.9\n",
      flags: { server: "https://other.lab", nodeId: "from-flag", mgmtAddr: "10.1.1.1" },
      want: {
        server: "https://other.lab",
        nodeId: "from-flag",
        hostname: "GPU-Node-01.lab.example",
        mgmtAddr: "10.1.1.1",
      },
    },
    {
      name: "agent.yaml's own node id, host name and address",
      yaml: "server: https://cp.lab\nnode_id: n1\nhostname: n1.lab\nmgmt_addr: 10.9.9.9\n",
      flags: {},
      want: { server: "https://cp.lab", nodeId: "n1", hostname: "n1.lab", mgmtAddr: "10.9.9.9" },
    },
    {
      name: "the management address of the configured interface",
      yaml: "server: https://cp.lab\nmgmt_interface: ib0\n",
      flags: {},
      want: {
        server: "https://cp.lab",
        nodeId: "gpu-node-01",
        hostname: "GPU-Node-01.lab.example",
        mgmtAddr: "192.168.50.11",
        mgmtInterface: "ib0",
      },
    },
    {
      name: "a server from the flag alone",
      yaml: "",
      flags: { server: "http://127.0.0.1:8080" },
      want: {
        server: "http://127.0.0.1:8080",
        nodeId: "gpu-node-01",
        hostname: "GPU-Node-01.lab.example",
        mgmtAddr: "10.0.0.11",
      },
    },
  ])("$name", ({ yaml, flags, want }) => {
    expect(resolveIdentity(cfg(yaml), flags, IFACES, "GPU-Node-01.lab.example")).toEqual(want);
  });

  it.each([
    {
      name: "no server",
      yaml: "",
      flags: {},
      ifaces: IFACES,
      error: /^no control plane: set `server` in agent\.yaml or pass --server URL$/,
    },
    {
      name: "a server that is not a URL",
      yaml: "",
      flags: { server: "notaurl" },
      ifaces: IFACES,
      error: /^server "notaurl" is not an http:\/\/ or https:\/\/ URL$/,
    },
    {
      name: "an interface without IPv4",
      yaml: "server: https://cp.lab\nmgmt_interface: docker0\n",
      flags: {},
      ifaces: IFACES,
      error: /^interface docker0 has no IPv4 address: set mgmt_addr or pass --mgmt-addr$/,
    },
    {
      name: "a configured interface that does not exist",
      yaml: "server: https://cp.lab\nmgmt_interface: eth9\n",
      flags: {},
      ifaces: IFACES,
      error: /^interface eth9 has no IPv4 address/,
    },
    {
      name: "only loopback",
      yaml: "server: https://cp.lab\n",
      flags: {},
      ifaces: { lo: [v4("127.0.0.1", true)] },
      error: /^no management address found: set mgmt_addr or pass --mgmt-addr$/,
    },
    {
      name: "both missing, listed together",
      yaml: "",
      flags: {},
      ifaces: {},
      error: /^no control plane: .*; no management address found/,
    },
  ])("throws for $name", ({ yaml, flags, ifaces, error }) => {
    expect(() => resolveIdentity(cfg(yaml), flags, ifaces, "h")).toThrow(error);
  });

  it("an address given by flag needs no interface", () => {
    expect(
      resolveIdentity(cfg("server: https://cp.lab\nmgmt_interface: eth9\n"), { mgmtAddr: "10.2.2.2" }, {}, "h")
        .mgmtAddr,
    ).toBe("10.2.2.2");
  });
});

describe("addressOf", () => {
  it("takes the first non-internal IPv4 address, of interfaces in name order", () => {
    expect(
      addressOf({ zz0: [v4("10.0.0.2")], eth1: [v6("fe80::2"), v4("10.0.0.1")], lo: [v4("127.0.0.1", true)] }),
    ).toBe("10.0.0.1");
    expect(addressOf(IFACES, "ib0")).toBe("192.168.50.11");
    expect(addressOf(IFACES, "lo")).toBeUndefined();
    expect(addressOf({})).toBeUndefined();
  });
});

describe("nodeIdFromHostname", () => {
  it.each([
    ["gpu-node-01.lab.example.com", "gpu-node-01"],
    ["GPU-Node-01", "gpu-node-01"],
    ["dgx_a100#3.local", "dgx_a100-3"],
    ["--edge", "edge"],
    ["_x", "x"],
    ["", "node"],
    ["...", "node"],
    ["ä", "node"],
    ["a".repeat(80), "a".repeat(63)],
  ])("%j → %j", (host, id) => {
    expect(nodeIdFromHostname(host)).toBe(id);
    expect(NodeId.safeParse(nodeIdFromHostname(host)).success).toBe(true);
  });
});

describe("tokens", () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => {
    t = tempDir();
  });
  afterEach(() => t.cleanup());

  it("saves the node token readable by the agent only and reads it back", async () => {
    const dir = join(t.dir, "state");
    expect(await readNodeToken(dir)).toBeUndefined();
    await saveNodeToken(dir, "llmgw_node_abc");
    expect(statSync(join(dir, "node-token")).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, "node-token"), "utf8")).toBe("llmgw_node_abc\n");
    expect(await readNodeToken(dir)).toBe("llmgw_node_abc");
    await saveNodeToken(dir, "llmgw_node_def");
    expect(await readNodeToken(dir)).toBe("llmgw_node_def");
    expect(readdirSync(dir)).toEqual(["node-token"]);
  });

  it("reads an empty token file as no token", async () => {
    writeFileSync(join(t.dir, "node-token"), "\n");
    expect(await readNodeToken(t.dir)).toBeUndefined();
  });

  it("reads the join token from agent.yaml, else from its file (trimmed)", async () => {
    const file = join(t.dir, "join");
    writeFileSync(file, "llmgw_join_xyz\n");
    expect(await readJoinToken({ joinToken: "inline", joinTokenFile: file })).toBe("inline");
    expect(await readJoinToken({ joinToken: undefined, joinTokenFile: file })).toBe("llmgw_join_xyz");
    expect(await readJoinToken({ joinToken: undefined, joinTokenFile: undefined })).toBeUndefined();
    writeFileSync(file, "  \n");
    expect(await readJoinToken({ joinToken: undefined, joinTokenFile: file })).toBeUndefined();
  });

  it("fails when the join token file cannot be read", async () => {
    await expect(readJoinToken({ joinToken: undefined, joinTokenFile: join(t.dir, "missing") })).rejects.toThrow(
      /ENOENT/,
    );
  });
});
