// Small helpers every discovery source shares.

/** Drops undefined properties: the wire schemas are strict and want absent keys, not undefined ones. */
export function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The message of a thrown value, bounded to what a DiscoveryError carries. */
export const errorMessage = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 2048);
