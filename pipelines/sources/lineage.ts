import { ENDPOINTS } from "./endpoints.ts";
import { RECORDED_CAPTURES } from "./recorded-captures.ts";
import type { Endpoint } from "./types.ts";
import { must } from "../../lib/must.ts";

/**
 * Lineage and time semantics of every price/source label, built from the declarations of the
 * endpoints (`Endpoint.lineage`, `Endpoint.time`) and of the recorded files read into them
 * (`RecordedCapture.time`). A source label is the value stored in the `source` column of
 * raw_price_history / raw_price_bars (and the quote source of list/markets quotes):
 * `Endpoint.rowSource` when set, else `Endpoint.source`.
 */

/** One source label: its endpoints, independent family, what it copies, and its time semantics. */
export interface SourceLineageEntry {
  source: string;
  endpoints: string[];
  family: string;
  derivedFrom: string | null;
  /** IANA zone(s) of the labels, live wire first then recorded files (` | `-joined when several). */
  zone: string;
  /** Daily-bucket rule(s), same order as `zone`. */
  dailyBucket: string;
}

/** Source label an endpoint's rows carry. */
function labelOf(e: Endpoint): string {
  return e.rowSource ?? e.source;
}

function buildLineage(): SourceLineageEntry[] {
  const bySource = new Map<
    string,
    { entry: Omit<SourceLineageEntry, "zone" | "dailyBucket">; zones: string[]; buckets: string[] }
  >();
  const addTime = (s: { zones: string[]; buckets: string[] }, zone: string, bucket: string) => {
    if (!s.zones.includes(zone)) s.zones.push(zone);
    if (!s.buckets.includes(bucket)) s.buckets.push(bucket);
  };
  for (const e of Object.values(ENDPOINTS).sort((a, b) => a.key.localeCompare(b.key))) {
    const source = labelOf(e);
    let cur = bySource.get(source);
    if (!cur) {
      cur = {
        entry: { source, endpoints: [], family: e.lineage.family, derivedFrom: e.lineage.derivedFrom },
        zones: [],
        buckets: [],
      };
      bySource.set(source, cur);
    } else if (cur.entry.family !== e.lineage.family || cur.entry.derivedFrom !== e.lineage.derivedFrom) {
      throw new Error(
        `source label ${source}: endpoints ${cur.entry.endpoints.join(",")} and ${e.key} declare different lineage`,
      );
    }
    cur.entry.endpoints.push(e.key);
    addTime(cur, e.time.zone, e.time.dailyBucket);
  }
  for (const rc of RECORDED_CAPTURES) {
    const e = ENDPOINTS[rc.endpoint];
    if (e)
      addTime(must(bySource.get(labelOf(e)), `lineage of source ${labelOf(e)}`), rc.time.zone, rc.time.dailyBucket);
  }
  return [...bySource.values()]
    .sort((a, b) => a.entry.source.localeCompare(b.entry.source))
    .map((s) => ({ ...s.entry, zone: s.zones.join(" | "), dailyBucket: s.buckets.join(" | ") }));
}

/** Every source label with its declared lineage and time semantics, for the manifest and docs/choices.md ("Source lineage"). */
export const SOURCE_LINEAGE: {
  source: string;
  endpoints: string[];
  family: string;
  derivedFrom: string | null;
  zone: string;
  dailyBucket: string;
}[] = buildLineage();

const FAMILY_BY_SOURCE: ReadonlyMap<string, string> = new Map(SOURCE_LINEAGE.map((s) => [s.source, s.family]));

/** Independent upstream family of a price `source` label as stored in raw_price_history / raw_price_bars / list & markets quotes ("defillama", "coingecko", "alchemy", "binance"); unknown labels are their own family. */
export function sourceFamily(source: string): string {
  return FAMILY_BY_SOURCE.get(source) ?? source;
}

/**
 * Whether a price `source` label is a declared copy of another upstream's series
 * (`lineage.derivedFrom` set, e.g. Alchemy's daily prices copy CoinGecko's). A copy can corroborate
 * but never be the only evidence of a depeg. Unknown labels are originals.
 */
export function isCopiedSource(source: string): boolean {
  return (SOURCE_LINEAGE.find((s) => s.source === source)?.derivedFrom ?? null) !== null;
}
