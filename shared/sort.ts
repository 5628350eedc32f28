// The one order llmgw sorts names, ids and keys in: by UTF-16 code units (what `<` compares), the same in every
// locale, so lists, plans and canonical JSON come out alike on every instance.

/** Compares two strings by code units: -1, 0 or 1. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A comparator of items by a text key of each. */
export const byText =
  <T>(key: (item: T) => string) =>
  (a: T, b: T): number =>
    compareText(key(a), key(b));
