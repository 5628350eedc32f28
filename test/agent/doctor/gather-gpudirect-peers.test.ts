// The GPUDirect facts under a crafted /sys and /proc tree, and the NVLink peers call (msw in place of the control
// plane).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { probePeers, readGpuDirect } from "../../../agent/doctor/gather.js";
import { tempDir } from "../../helpers/db.js";

const CP = "http://cp.test:8080";
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** Files under a fresh directory of the temp dir. */
function tree(name: string, files: Record<string, string>): string {
  const root = join(tmp.dir, name);
  mkdirSync(root, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("readGpuDirect", () => {
  it("finds nvidia_peermem, the driver's first line and the kernel under the root", async () => {
    const root = tree("gdr-peermem", {
      "sys/module/nvidia_peermem/refcnt": "0\n",
      "proc/driver/nvidia/version":
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build\nGCC version:  gcc 13\n",
      "proc/sys/kernel/osrelease": "6.8.0-45-generic\n",
    });
    expect(await readGpuDirect(root)).toEqual({
      peermem: true,
      nvPeerMem: false,
      driverVersion: "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build",
      kernel: "6.8.0-45-generic",
    });
  });

  it("finds the legacy nv_peer_mem, and reads absent files as not there", async () => {
    const root = tree("gdr-legacy", { "sys/kernel/mm/memory_peers/nv_mem/version": "1.3\n" });
    expect(await readGpuDirect(root)).toEqual({ peermem: false, nvPeerMem: true });
  });
});

describe("probePeers", () => {
  const PEERS = "/api/v1/agents/:node/nvlink-peers";
  it("asks with the node token and returns the control plane's domain and addresses", async () => {
    let auth: string | null = null;
    server.use(
      http.get(`${CP}${PEERS}`, ({ request, params }) => {
        auth = request.headers.get("authorization");
        return HttpResponse.json({ domain: `d.${params.node}`, addresses: ["10.0.0.1", "10.0.0.2"] });
      }),
    );
    expect(await probePeers({ base: CP, nodeId: "gpu-01", token: "llmgw_node_abc" })).toEqual({
      ok: true,
      domain: "d.gpu-01",
      addresses: ["10.0.0.1", "10.0.0.2"],
    });
    expect(auth).toBe("Bearer llmgw_node_abc");
  });

  it.each([
    ["an older control plane (404)", () => HttpResponse.json({}, { status: 404 }), /HTTP 404 \(a control plane older/],
    ["an answer of the wrong shape", () => HttpResponse.json({ domain: 3 }), /unexpected answer \(domain: /],
    ["no connection", () => HttpResponse.error(), /nvlink-peers: cannot reach it: /],
  ])("says why on %s", async (_, answer, error) => {
    server.use(http.get(`${CP}${PEERS}`, answer));
    expect(await probePeers({ base: CP, nodeId: "gpu-01", token: "t" })).toEqual({
      ok: false,
      error: expect.stringMatching(error),
    });
  });
});
