// What the load generator and its three clients share.

import { performance } from "node:perf_hooks";

export const SEATS = 4;
export const SPECTATORS = 2;
export const VIEWERS = SEATS + SPECTATORS;

/** Seconds on the monotonic clock. */
export const now = () => performance.now() / 1000;

export function sleep(seconds) {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, seconds * 1000)));
}

/** A copy with every map's keys in order (to compare views whatever the order of their keys). */
export function sorted(value) {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sorted(value[k])]),
  );
}
