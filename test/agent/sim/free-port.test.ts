// The engine ports a simulated node gets: consecutive, free, and out of the kernel's ephemeral range.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ephemeralLow, freePortBlock } from "../../../agent/sim/free-port.js";

const held: Server[] = [];
afterEach(async () => {
  await Promise.all(held.splice(0).map((s) => new Promise((ok) => s.close(ok))));
});
/** Listens on `port` (as an engine would, on every address) until the test ends. */
const occupy = (port: number) =>
  new Promise<void>((ok, fail) => {
    const s = createServer();
    held.push(s);
    s.once("error", fail);
    s.listen(port, () => ok());
  });

/** The first port of a random block of `size` below the kernel's ephemeral range, where no outgoing connection takes one. */
const randomLow = (base: number, size: number) =>
  base + Math.floor(Math.random() * Math.floor((ephemeralLow() - base - size) / size)) * size;

describe("freePortBlock", () => {
  it("skips a block where one port is taken, and gives the next whose ports are all free", async () => {
    const low = randomLow(20_000, 20);
    await occupy(low + 3);
    const picks = [0, 0.6]; // the first block (taken at low + 3), then the second of two
    const first = await freePortBlock(10, { low, high: low + 20, random: () => picks.shift() ?? 0.6 });
    expect(first).toBe(low + 10);
  });

  it("says so when every block is taken", async () => {
    const low = randomLow(21_000, 10);
    await occupy(low + 9);
    await expect(freePortBlock(10, { low, high: low + 10, tries: 3 })).rejects.toThrow(
      `found no 10 free ports in a row between ${low} and ${low + 10}`,
    );
  });

  it("stays below the kernel's ephemeral range by default, where outgoing connections take their ports", async () => {
    const lowEphemeral = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    for (let i = 0; i < 5; i++) {
      const first = await freePortBlock(40);
      expect(first).toBeGreaterThanOrEqual(20_000);
      expect(first + 40).toBeLessThanOrEqual(lowEphemeral);
    }
  });
});
