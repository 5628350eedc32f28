// An instance's hints of which heartbeat facts each node last had applied: what it was told, until there are too many.
import { expect, it } from "vitest";
import { newBeatHints, tryQuick } from "../../api/nodes/beat-hints.js";

it("give back the digest last seen for a node, nothing for one never seen", () => {
  const h = newBeatHints();
  h.saw("a", "d1");
  h.saw("a", "d2");
  expect([h.applied("a"), h.applied("b")]).toEqual(["d2", undefined]);
});

it("start over past their bound rather than grow: a forgotten node only takes its full path once", () => {
  const h = newBeatHints(2);
  h.saw("a", "1");
  h.saw("b", "2");
  h.saw("b", "3"); // a node already kept does not count twice
  expect(h.applied("a")).toBe("1");
  h.saw("c", "4");
  expect([h.applied("a"), h.applied("b"), h.applied("c")]).toEqual([undefined, undefined, "4"]);
});

it("after a registration say its inventory's facts are applied: a heartbeat saying them tries the batch", () => {
  const h = newBeatHints();
  h.registered("a", "d0");
  expect([tryQuick(h, "a", "d0"), tryQuick(h, "a", "d1")]).toEqual([true, false]);
});

it("after a registration whose inventory implies no heartbeat say none applied yet: that heartbeat takes its transaction; an unknown node tries the batch", () => {
  const h = newBeatHints();
  h.registered("a", null);
  expect(h.applied("a")).toBe("");
  expect([tryQuick(h, "a", "d1"), tryQuick(h, "b", "d1"), tryQuick(undefined, "a", "d1")]).toEqual([false, true, true]);
  h.saw("a", "d1");
  expect([tryQuick(h, "a", "d1"), tryQuick(h, "a", "d2")]).toEqual([true, false]);
});
