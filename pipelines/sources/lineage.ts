import { ENDPOINTS } from "./endpoints.ts";
import type { Endpoint } from "./types.ts";

/**
 * Lineage and time semantics of every source label, built from the endpoints' own declarations
 * (`Endpoint.lineage`, `Endpoint.time`). A source label is the value stored in the `source`
 * column of raw_price_history / raw_price_bars (and the quote source of list/markets quotes):
 * `Endpoint.rowSource` when set, else `Endpoint.source`.
 */

/** Source label an endpoint's rows carry. */
function labelOf(e: Endpoint): string {
  return e.rowSource ?? e.source;
}

function buildLineage(): { source: string; endpoints: string[]; family: string; derivedFrom: string | null; zone: string; dailyBucket: string }[] {
  const bySource = new Map<string, { source: string; endpoints: string[]; family: string; derivedFrom: string | null; zones: Set<string>; buckets: Set<string> }>();
  for (const e of Object.values(ENDPOINTS).sort((a, b) => a.key.localeCompare(b.key))) {
    const source = labelOf(e);
    const cur = bySource.get(source);
    if (!cur) {
      bySource.set(source, {
        source, endpoints: [e.key], family: e.lineage.family, derivedFrom: e.lineage.derivedFrom,
        zones: new Set([e.time.zone]), buckets: new Set([e.time.dailyBucket]),
      });
      continue;
    }
    if (cur.family !== e.lineage.family || cur.derivedFrom !== e.lineage.derivedFrom) {
      throw new Error(`source label ${source}: endpoints ${cur.endpoints.join(",")} and ${e.key} declare different lineage`);
    }
    cur.endpoints.push(e.key);
    cur.zones.add(e.time.zone);
    cur.buckets.add(e.time.dailyBucket);
  }
  return [...bySource.values()]
    .sort((a, b) => a.source.localeCompare(b.source))
    .map((s) => ({
      source: s.source, endpoints: s.endpoints, family: s.family, derivedFrom: s.derivedFrom,
      zone: [...s.zones].sort().join(" | "), dailyBucket: [...s.buckets].sort().join(" | "),
    }));
}

/** Every source label with its declared lineage and time semantics, for the manifest and README. */
export const SOURCE_LINEAGE: { source: string; endpoints: string[]; family: string; derivedFrom: string | null; zone: string; dailyBucket: string }[] = buildLineage();

const FAMILY_BY_SOURCE: ReadonlyMap<string, string> = new Map(SOURCE_LINEAGE.map((s) => [s.source, s.family]));

/** Independent upstream family of a price `source` label as stored in raw_price_history / raw_price_bars / list & markets quotes ("defillama", "coingecko", "alchemy", "binance"); unknown labels are their own family. */
export function sourceFamily(source: string): string {
  return FAMILY_BY_SOURCE.get(source) ?? source;
}
