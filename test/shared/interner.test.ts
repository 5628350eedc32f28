import { describe, expect, it } from "vitest";
import { interner } from "../../shared/interner.js";

describe("interner", () => {
  it("hands out the first of equal values, and keeps unequal ones apart", () => {
    const share = interner();
    const a = share({ peers: [1, 2], class: "h100-80g" });
    expect(share({ peers: [1, 2], class: "h100-80g" })).toBe(a);
    expect(share({ peers: [1, 3], class: "h100-80g" })).not.toBe(a);
    expect(share("h100-80g")).toBe("h100-80g");
    expect(share(null)).toBeNull();
    // a string and the JSON of another value are not confused
    expect(share('"x"')).toBe('"x"');
    expect(share("x")).toBe("x");
  });

  it("freezes what it hands out, so no holder can change it under the others", () => {
    const share = interner();
    const v = share({ problems: ["hot"], nested: { list: [1] } });
    expect(() => (v.problems as string[]).push("cold")).toThrow(TypeError);
    expect(() => {
      (v.nested as { list: number[] }).list[0] = 2;
    }).toThrow(TypeError);
  });

  it("starts afresh past its limit, handing out new values that stay valid", () => {
    const share = interner(2);
    const first = share([1]);
    share([2]);
    share([3]); // the third distinct value clears what it remembered
    const again = share([1]);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    expect(share([1])).toBe(again);
  });
});
