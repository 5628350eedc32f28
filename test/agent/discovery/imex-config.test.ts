import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cachedImexConfig, parseImexNodesConfig, readImexNodesConfig } from "../../../agent/discovery/imex-config.js";
import { imexConfigDigest } from "../../../shared/imex-config.js";
import { tempDir } from "../../helpers/db.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("parseImexNodesConfig", () => {
  it.each([
    ["one address a line", "10.0.0.1\n10.0.0.2\n", ["10.0.0.1", "10.0.0.2"]],
    ["sorted, whatever the file's order", "10.0.0.3\n10.0.0.1\n10.0.0.2", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]],
    [
      "comments, whole-line and after an address",
      "# GB200 rack 12\n10.0.0.1   # tray 1\n  # tray 2 is out\n10.0.0.3\n",
      ["10.0.0.1", "10.0.0.3"],
    ],
    ["blank lines and surrounding whitespace", "\n\n  10.0.0.1\t\n   \n\t10.0.0.2  \n\n", ["10.0.0.1", "10.0.0.2"]],
    ["duplicates dropped", "10.0.0.1\n10.0.0.2\n10.0.0.1\n 10.0.0.2 \n", ["10.0.0.1", "10.0.0.2"]],
    ["CRLF line ends", "10.0.0.2\r\n10.0.0.1\r\n# c\r\n\r\n", ["10.0.0.1", "10.0.0.2"]],
    ["host names and IPv6", "gb-tray-b.lab\nfd00::11\ngb-tray-a.lab\n", ["fd00::11", "gb-tray-a.lab", "gb-tray-b.lab"]],
    ["an empty file", "", []],
    ["only comments", "# nothing yet\n", []],
  ])("%s", (_, text, want) => expect(parseImexNodesConfig(text)).toEqual(want));
});

describe("readImexNodesConfig", () => {
  it("reads the file's addresses; a missing file is absent; a directory cannot be read", async () => {
    const path = join(tmp.dir, "nodes_config.cfg");
    writeFileSync(path, "10.0.0.2\n10.0.0.1\n");
    expect(await readImexNodesConfig(path)).toEqual({ path, kind: "read", addresses: ["10.0.0.1", "10.0.0.2"] });
    const absent = join(tmp.dir, "absent.cfg");
    expect(await readImexNodesConfig(absent)).toEqual({ path: absent, kind: "absent" });
    const dir = join(tmp.dir, "a-dir.cfg");
    mkdirSync(dir);
    expect(await readImexNodesConfig(dir)).toEqual({ path: dir, kind: "unreadable", error: "EISDIR" });
  });
});

describe("cachedImexConfig", () => {
  it("summarizes the file (digest, count), reading it again only once a minute has passed", async () => {
    const path = join(tmp.dir, "cached.cfg");
    writeFileSync(path, "10.0.0.1\n10.0.0.2\n");
    let now = 1_000_000;
    const read = cachedImexConfig(path, () => now);
    const two = { digest: await imexConfigDigest(["10.0.0.1", "10.0.0.2"]), addresses: 2 };
    expect(await read()).toEqual(two);
    writeFileSync(path, "10.0.0.1\n10.0.0.2\n10.0.0.3\n");
    now += 59_999;
    expect(await read()).toEqual(two);
    now += 1;
    expect(await read()).toEqual({
      digest: await imexConfigDigest(["10.0.0.1", "10.0.0.2", "10.0.0.3"]),
      addresses: 3,
    });
  });

  it("gives nothing while the file is absent", async () => {
    expect(await cachedImexConfig(join(tmp.dir, "none.cfg"), () => 0)()).toBeUndefined();
  });
});
