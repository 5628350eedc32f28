import { describe, expect, it } from "vitest";
import { byText, compareText } from "../../shared/sort.js";

describe("compareText", () => {
  it("orders by code units, the same in every locale (upper case before lower, no numeric collation)", () => {
    expect(["b", "a", "B", "n10", "n9"].sort(compareText)).toEqual(["B", "a", "b", "n10", "n9"]);
    expect(compareText("x", "x")).toBe(0);
  });
});

describe("byText", () => {
  it("sorts items by a key and keeps items with equal keys in their order", () => {
    const items = [
      { id: "n2", i: 0 },
      { id: "n1", i: 1 },
      { id: "n2", i: 2 },
    ];
    expect(items.sort(byText((x) => x.id)).map((x) => x.i)).toEqual([1, 0, 2]);
  });
});
