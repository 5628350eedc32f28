import { describe, expect, it } from "vitest";
import { nodeFacts } from "../../api/placement/input.js";
import { H100_XML, inventoryFromCapture } from "../helpers/inventory.js";

const board = inventoryFromCapture(H100_XML);
const node = (n: number, problems: (card: number) => string[] = () => []) => ({
  ...board,
  gpus: board.gpus.map((g) => ({
    ...g,
    uuid: `GPU-${n}-${g.index}`,
    health: { ...g.health, problems: problems(g.index) },
  })),
});

describe("a node's placement facts", () => {
  it("share what nodes of one board have alike, and keep each card's UUID its own", () => {
    const a = nodeFacts(JSON.stringify(node(1)));
    const b = nodeFacts(JSON.stringify(node(2)));
    expect(b.cards).toBe(a.cards);
    expect(b.engines).toBe(a.engines);
    expect(b.nvlink).toBe(a.nvlink);
    expect(b.devices.map((d) => d.uuid)).toEqual(board.gpus.map((g) => `GPU-2-${g.index}`));
    expect(a.devices.map((d) => d.uuid)).toEqual(board.gpus.map((g) => `GPU-1-${g.index}`));
  });

  it("keep one node's card problems off another node of the same board", () => {
    const hot = nodeFacts(JSON.stringify(node(3, (c) => (c === 2 ? ["temperature 95 C"] : []))));
    const cool = nodeFacts(JSON.stringify(node(4)));
    expect(hot.cards.find((c) => c.index === 2)!.problems).toEqual(["temperature 95 C"]);
    expect(hot.devices.find((d) => d.card === 2)!.problems).toEqual(["temperature 95 C"]);
    expect(cool.cards.every((c) => c.problems?.length === 0)).toBe(true);
    expect(cool.devices.every((d) => d.problems.length === 0)).toBe(true);
  });

  it("leave the inventory they were given as it was (nothing of it frozen)", () => {
    const inv = node(5);
    nodeFacts(inv);
    expect(Object.isFrozen(inv.gpus[0]!.health.problems)).toBe(false);
    expect(Object.isFrozen(inv.engines.versions)).toBe(false);
  });
});
