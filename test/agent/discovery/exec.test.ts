import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../../../agent/discovery/exec.js";
import { tempDir } from "../../helpers/db.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

async function script(name: string, body: string, mode = 0o755) {
  const p = join(tmp.dir, name);
  await writeFile(p, `#!/bin/sh\n${body}\n`);
  await chmod(p, mode);
  return p;
}

describe("run", () => {
  it("returns stdout and stderr of a command that succeeds", async () => {
    expect(await run(await script("ok", "echo out; echo err >&2"), [], 5000)).toEqual({
      ok: true,
      stdout: "out\n",
      stderr: "err\n",
    });
  });

  it("says why a command could not answer, in one sentence", async () => {
    expect(await run(join(tmp.dir, "nope"), ["-q"], 5000)).toEqual({
      ok: false,
      missing: true,
      error: `${join(tmp.dir, "nope")} -q: not found (is it installed and on PATH?)`,
    });
    const noexec = await script("noexec", "echo hi", 0o644);
    expect(await run(noexec, [], 5000)).toMatchObject({
      ok: false,
      missing: false,
      error: `${noexec}: permission denied (not executable?)`,
    });
    const slow = await script("slow", "exec sleep 5");
    expect(await run(slow, ["-x"], 200)).toEqual({
      ok: false,
      missing: false,
      timedOut: true,
      error: `${slow} -x: no answer within 200 ms`,
    });
    const bad = await script(
      "bad",
      "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver' >&2; exit 9",
    );
    expect(await run(bad, [], 5000)).toEqual({
      ok: false,
      missing: false,
      error: `${bad}: exited with status 9: NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver`,
    });
  });
});
