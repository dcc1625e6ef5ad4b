/**
 * Removes the oldest entry of `map` (the first inserted: Maps iterate in insertion order) and returns
 * it as `[key, value]`, or undefined when the map is empty. The eviction step of the bounded
 * first-in-first-out caches of the API (a hit does not reorder them).
 */
export function dropOldest<K, V>(map: Map<K, V>): [K, V] | undefined {
  const first = map.entries().next();
  if (first.done) return undefined;
  map.delete(first.value[0]);
  return first.value;
}
