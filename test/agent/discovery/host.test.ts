import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { arch, release, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  fsTypeOf,
  isSharedFs,
  type Mount,
  parseCpuinfo,
  parseMeminfo,
  parseMounts,
  parseOsRelease,
  readHost,
  readStorage,
  readWeights,
} from "../../../agent/discovery/host.js";

const UBUNTU_2404 = `PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.1 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=noble
LOGO=ubuntu-logo
`;

const DEBIAN_12 = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
`;

const RHEL_94 = `NAME="Red Hat Enterprise Linux"
VERSION="9.4 (Plow)"
ID="rhel"
ID_LIKE="fedora"
VERSION_ID="9.4"
PLATFORM_ID="platform:el9"
PRETTY_NAME="Red Hat Enterprise Linux 9.4 (Plow)"
ANSI_COLOR="0;31"
LOGO="fedora-logo-icon"
CPE_NAME="cpe:/o:redhat:enterprise_linux:9::baseos"
HOME_URL="https://www.redhat.com/"
REDHAT_BUGZILLA_PRODUCT="Red Hat Enterprise Linux 9"
REDHAT_BUGZILLA_PRODUCT_VERSION=9.4
REDHAT_SUPPORT_PRODUCT="Red Hat Enterprise Linux"
REDHAT_SUPPORT_PRODUCT_VERSION="9.4"
`;

/**
 * Linux Mint names its own codename in VERSION_CODENAME; here only UBUNTU_CODENAME is set (and quoted), as on older
 * Ubuntu derivatives.
 */
const UBUNTU_CODENAME_ONLY = `NAME="Ubuntu"
VERSION="16.04.7 LTS (Xenial Xerus)"
ID=ubuntu
ID_LIKE=debian
VERSION_ID='16.04'
VERSION_CODENAME=
UBUNTU_CODENAME="xenial"
`;

const X86_CPUINFO = `processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 143
model name	: Intel(R) Xeon(R) Platinum 8480+
stepping	: 8
microcode	: 0x2b0004b1
cpu MHz		: 2000.000
cache size	: 107520 KB
physical id	: 0
siblings	: 2
core id		: 0
cpu cores	: 1
fpu		: yes
fpu_exception	: yes
cpuid level	: 32
wp		: yes
flags		: fpu vme de pse tsc msr pae mce cx8 apic sse2 avx2 avx512f avx512_bf16 amx_tile amx_bf16
vmx flags	: vnmi preemption_timer invvpid ept_x_only
bugs		: spectre_v1 spectre_v2 spec_store_bypass
bogomips	: 4000.00
clflush size	: 64
address sizes	: 46 bits physical, 57 bits virtual
power management:

processor	: 1
vendor_id	: GenuineIntel
cpu family	: 6
model		: 143
model name	: Intel(R) Xeon(R) Platinum 8480+
flags		: fpu vme de pse tsc msr pae mce cx8 apic sse2 avx2 avx512f avx512_bf16 amx_tile amx_bf16
bogomips	: 4000.00
power management:

`;

/** /proc/cpuinfo of an Arm Neoverse V2 (Grace): no `model name`, features under `Features`. */
const GRACE_CPUINFO = `processor	: 0
BogoMIPS	: 2000.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 i8mm bf16 dgh bti
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x0
CPU part	: 0xd4f
CPU revision	: 0

processor	: 1
BogoMIPS	: 2000.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 i8mm bf16 dgh bti
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x0
CPU part	: 0xd4f
CPU revision	: 0

processor	: 2
BogoMIPS	: 2000.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 i8mm bf16 dgh bti
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x0
CPU part	: 0xd4f
CPU revision	: 0
`;

const MEMINFO = `MemTotal:       2113305600 kB
MemFree:        1999999488 kB
MemAvailable:   2048000000 kB
Buffers:          123456 kB
Cached:          7654321 kB
SwapCached:            0 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
`;

describe("parseOsRelease", () => {
  it("reads Ubuntu", () => {
    expect(parseOsRelease(UBUNTU_2404)).toEqual({ osId: "ubuntu", osVersion: "24.04", osCodename: "noble" });
  });

  it("reads Debian", () => {
    expect(parseOsRelease(DEBIAN_12)).toEqual({ osId: "debian", osVersion: "12", osCodename: "bookworm" });
  });

  it("strips quotes from RHEL values and leaves out the codename it does not have", () => {
    const r = parseOsRelease(RHEL_94);
    expect(r).toEqual({ osId: "rhel", osVersion: "9.4" });
    expect("osCodename" in r).toBe(false);
  });

  it("falls back to UBUNTU_CODENAME when VERSION_CODENAME is empty, single quotes stripped too", () => {
    expect(parseOsRelease(UBUNTU_CODENAME_ONLY)).toEqual({ osId: "ubuntu", osVersion: "16.04", osCodename: "xenial" });
  });

  it("tolerates CRLF line ends and returns nothing for an empty file", () => {
    expect(parseOsRelease(DEBIAN_12.replace(/\n/g, "\r\n"))).toEqual({
      osId: "debian",
      osVersion: "12",
      osCodename: "bookworm",
    });
    expect(parseOsRelease("")).toEqual({});
  });
});

describe("parseCpuinfo", () => {
  it("reads an x86 model, counts processors and sorts `flags` (not `vmx flags`)", () => {
    const r = parseCpuinfo(X86_CPUINFO);
    expect(r.cpuModel).toBe("Intel(R) Xeon(R) Platinum 8480+");
    expect(r.cpuCount).toBe(2);
    expect(r.cpuFlags).toEqual([
      "amx_bf16",
      "amx_tile",
      "apic",
      "avx2",
      "avx512_bf16",
      "avx512f",
      "cx8",
      "de",
      "fpu",
      "mce",
      "msr",
      "pae",
      "pse",
      "sse2",
      "tsc",
      "vme",
    ]);
    expect(r.cpuFlags).not.toContain("vnmi");
  });

  it("reads Arm `Features` and reports no model where cpuinfo has no `model name`", () => {
    const r = parseCpuinfo(GRACE_CPUINFO);
    expect(r.cpuCount).toBe(3);
    expect(r.cpuFlags).toContain("sve2");
    expect(r.cpuFlags).toContain("bf16");
    expect(r.cpuFlags).toHaveLength(47);
    expect(r.cpuFlags).toEqual([...r.cpuFlags].sort());
    expect("cpuModel" in r).toBe(false);
  });

  it("returns no count and no flags for an empty file", () => {
    expect(parseCpuinfo("")).toEqual({ cpuFlags: [] });
  });

  it("keeps a model name that contains a colon whole", () => {
    expect(parseCpuinfo("processor\t: 0\nmodel name\t: QEMU Virtual CPU version 2.5+: kvm64\n").cpuModel).toBe(
      "QEMU Virtual CPU version 2.5+: kvm64",
    );
  });
});

describe("parseMeminfo", () => {
  it("converts kB to MiB, rounded", () => {
    expect(parseMeminfo(MEMINFO)).toEqual({ totalMiB: 2_063_775, availableMiB: 2_000_000 });
    expect(parseMeminfo("MemTotal:        1537 kB\n")).toEqual({ totalMiB: 2 });
  });

  it("leaves available out on a kernel without MemAvailable", () => {
    const r = parseMeminfo("MemTotal:       16384000 kB\nMemFree:         8192000 kB\n");
    expect(r).toEqual({ totalMiB: 16_000 });
    expect("availableMiB" in r).toBe(false);
  });

  it("throws without a MemTotal line", () => {
    expect(() => parseMeminfo("MemFree:         8192000 kB\nMemAvailable:   9000000 kB\n")).toThrow(
      "/proc/meminfo: no MemTotal line",
    );
    expect(() => parseMeminfo("")).toThrow("/proc/meminfo: no MemTotal line");
  });
});

describe("parseMounts", () => {
  it("reads mount points and types, decoding octal escapes", () => {
    const text = [
      "/dev/nvme0n1p2 / ext4 rw,relatime 0 0",
      "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
      "10.0.0.5:/export/models /models nfs4 rw,relatime,vers=4.2,rsize=1048576 0 0",
      "/dev/sdb1 /mnt/my\\040models ext4 rw 0 0",
      "/dev/sdc1 /mnt/tab\\011and\\134slash xfs rw 0 0",
      "",
    ].join("\n");
    expect(parseMounts(text)).toEqual([
      { mountPoint: "/", fsType: "ext4" },
      { mountPoint: "/proc", fsType: "proc" },
      { mountPoint: "/models", fsType: "nfs4" },
      { mountPoint: "/mnt/my models", fsType: "ext4" },
      { mountPoint: "/mnt/tab\tand\\slash", fsType: "xfs" },
    ]);
  });

  it("returns nothing for an empty file", () => {
    expect(parseMounts("")).toEqual([]);
  });
});

describe("fsTypeOf", () => {
  const mounts: Mount[] = [
    { mountPoint: "/", fsType: "ext4" },
    { mountPoint: "/models", fsType: "nfs4" },
    { mountPoint: "/models2", fsType: "xfs" },
    { mountPoint: "/models/cache", fsType: "tmpfs" },
    { mountPoint: "/mnt/my models", fsType: "lustre" },
  ];

  it.each([
    ["/models", "nfs4"],
    ["/models/", "nfs4"],
    ["/models/llama-3.1-8b/config.json", "nfs4"],
    ["/models2", "xfs"],
    ["/models2/qwen", "xfs"],
    ["/modelsX", "ext4"],
    ["/models/cache/x", "tmpfs"],
    ["/models/cachex", "nfs4"],
    ["/mnt/my models/a", "lustre"],
    ["/var/lib/llmgw", "ext4"],
    ["/models/../models2/a", "xfs"],
  ])("%s is on %s", (path, want) => expect(fsTypeOf(path, mounts)).toBe(want));

  it("is undefined when no mount contains the path", () => {
    expect(fsTypeOf("/models/a", [{ mountPoint: "/models2", fsType: "xfs" }])).toBeUndefined();
    expect(fsTypeOf("/models", [])).toBeUndefined();
  });

  it("takes the last mount on a mount point: the NFS mount over its autofs trigger", () => {
    const autofs = parseMounts(
      "systemd-1 /models autofs rw,relatime 0 0\n10.0.0.5:/export /models nfs4 rw,relatime 0 0\n",
    );
    expect(fsTypeOf("/models/llama", autofs)).toBe("nfs4");
  });
});

describe("isSharedFs", () => {
  it.each([
    "nfs",
    "nfs4",
    "lustre",
    "gpfs",
    "cephfs",
    "ceph",
    "beegfs",
    "fuse.juicefs",
    "fuse.glusterfs",
    "fuse.ceph-fuse",
    "wekafs",
  ])("%s is shared", (t) => expect(isSharedFs(t)).toBe(true));
  it.each(["ext4", "xfs", "overlay", "tmpfs", "btrfs", "zfs", "fuse", "fuse.sshfsX", "nfsd", "autofs"])(
    "%s is not shared",
    (t) => expect(isSharedFs(t)).toBe(false),
  );
  it("is false for an unknown type", () => {
    expect(isSharedFs(undefined)).toBe(false);
  });
});

type Errors = { source: string; message: string }[];

describe("readers on a temp directory", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "llmgw-host-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function file(path: string, bytes: number) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), Buffer.alloc(bytes, 1));
  }

  describe("readWeights", () => {
    it("lists each model directory by name, case aside, with the size of every file beneath it", async () => {
      await file("w/Qwen2.5-72B-Instruct/model.safetensors", 3000);
      await file("w/Meta-Llama-3.1-8B-Instruct/config.json", 100);
      await file("w/Meta-Llama-3.1-8B-Instruct/model-00001-of-00004.safetensors", 4096);
      await file("w/Meta-Llama-3.1-8B-Instruct/original/consolidated.00.pth", 1234);
      await file("w/Meta-Llama-3.1-8B-Instruct/original/deep/tokenizer.model", 77);
      await file("w/gpt-oss-120b/a", 1);
      await file("w/README.md", 999);
      await mkdir(join(dir, "w/deepseek-v3"));
      const errors: Errors = [];
      const got = await readWeights([join(dir, "w")], [], errors);
      expect(errors).toEqual([]);
      expect(got).toEqual([
        { path: join(dir, "w/deepseek-v3"), sizeBytes: 0, shared: false },
        { path: join(dir, "w/gpt-oss-120b"), sizeBytes: 1, shared: false },
        { path: join(dir, "w/Meta-Llama-3.1-8B-Instruct"), sizeBytes: 100 + 4096 + 1234 + 77, shared: false },
        { path: join(dir, "w/Qwen2.5-72B-Instruct"), sizeBytes: 3000, shared: false },
      ]);
    });

    it("marks weights on a shared file system", async () => {
      await file("w/llama/a", 10);
      const got = await readWeights(
        [join(dir, "w")],
        [
          { mountPoint: "/", fsType: "ext4" },
          { mountPoint: dir, fsType: "nfs4" },
        ],
        [],
      );
      expect(got).toEqual([{ path: join(dir, "w/llama"), sizeBytes: 10, shared: true }]);
    });

    it("reports a missing directory as an error and still returns the others", async () => {
      await file("a/m1/x", 5);
      await file("b/m2/y", 7);
      const missing = join(dir, "nope");
      const errors: Errors = [];
      const got = await readWeights([join(dir, "a"), missing, join(dir, "b")], [], errors);
      expect(got.map((w) => [w.path, w.sizeBytes])).toEqual([
        [join(dir, "a/m1"), 5],
        [join(dir, "b/m2"), 7],
      ]);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toEqual({ source: `weights ${missing}`, message: expect.stringContaining("ENOENT") });
    });
  });

  describe("readStorage", () => {
    it("reports free and total bytes and the file system type", async () => {
      const errors: Errors = [];
      const got = await readStorage(
        [dir],
        [
          { mountPoint: "/", fsType: "ext4" },
          { mountPoint: dir, fsType: "lustre" },
        ],
        errors,
      );
      expect(errors).toEqual([]);
      expect(got).toHaveLength(1);
      const s = got[0]!;
      expect(s).toMatchObject({ path: dir, shared: true, fsType: "lustre" });
      expect(s.totalBytes).toBeGreaterThan(0);
      expect(s.freeBytes).toBeGreaterThanOrEqual(0);
      expect(s.freeBytes).toBeLessThanOrEqual(s.totalBytes);
      expect(Number.isInteger(s.totalBytes)).toBe(true);
    });

    it("leaves fsType out and marks the path local where no mount is known", async () => {
      const [s] = await readStorage([dir], [], []);
      expect(s).toMatchObject({ path: dir, shared: false });
      expect("fsType" in s!).toBe(false);
    });

    it("reports a missing path as an error and still returns the others", async () => {
      const missing = join(dir, "missing");
      const errors: Errors = [];
      const got = await readStorage([missing, dir], [], errors);
      expect(got.map((s) => s.path)).toEqual([dir]);
      expect(errors).toEqual([{ source: `storage ${missing}`, message: expect.stringContaining("ENOENT") }]);
    });
  });

  describe("readHost", () => {
    const hostArch = arch() === "x64" ? "x86_64" : arch() === "arm64" ? "aarch64" : arch();

    it("reads os-release, cpuinfo and meminfo under a root", async () => {
      await mkdir(join(dir, "etc"));
      await mkdir(join(dir, "proc"));
      await writeFile(join(dir, "etc/os-release"), UBUNTU_2404);
      await writeFile(join(dir, "proc/cpuinfo"), GRACE_CPUINFO);
      await writeFile(join(dir, "proc/meminfo"), MEMINFO);
      const errors: Errors = [];
      const { host, memory } = await readHost(dir, errors);
      expect(errors).toEqual([]);
      expect(memory).toEqual({ totalMiB: 2_063_775, availableMiB: 2_000_000 });
      expect(host).toMatchObject({
        osId: "ubuntu",
        osVersion: "24.04",
        osCodename: "noble",
        cpuCount: 3,
        arch: hostArch,
        kernel: release(),
      });
      expect(host.cpuFlags).toContain("sve2");
    });

    it("keeps what it could read when proc/meminfo is missing", async () => {
      await mkdir(join(dir, "etc"));
      await mkdir(join(dir, "proc"));
      await writeFile(join(dir, "etc/os-release"), RHEL_94);
      await writeFile(join(dir, "proc/cpuinfo"), X86_CPUINFO);
      const errors: Errors = [];
      const { host, memory } = await readHost(dir, errors);
      expect(memory).toEqual({ totalMiB: 0 });
      expect(errors).toHaveLength(1);
      expect(errors[0]!.source).toContain("proc/meminfo");
      expect(errors[0]!.message).toContain("ENOENT");
      expect(host).toMatchObject({
        osId: "rhel",
        osVersion: "9.4",
        cpuModel: "Intel(R) Xeon(R) Platinum 8480+",
        cpuCount: 2,
        arch: hostArch,
      });
    });

    it("reports a meminfo without MemTotal and an empty root, one error per file", async () => {
      await mkdir(join(dir, "proc"));
      await writeFile(join(dir, "proc/meminfo"), "MemFree: 1 kB\n");
      const errors: Errors = [];
      const { host, memory } = await readHost(dir, errors);
      expect(memory).toEqual({ totalMiB: 0 });
      expect(errors.map((e) => e.source).sort()).toEqual(["/etc/os-release", "/proc/cpuinfo", "/proc/meminfo"]);
      expect(errors.find((e) => e.source === "/proc/meminfo")!.message).toBe("/proc/meminfo: no MemTotal line");
      expect(host).toEqual({ arch: hostArch, kernel: release(), cpuFlags: [] });
    });
  });
});
