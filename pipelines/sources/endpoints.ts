import { SOURCES } from "./sources.ts";
import type { CaptureStep, Endpoint, LivePlanOptions, RawTable, SourceDeclaration } from "./types.ts";

/**
 * Views of the source declarations (`pipelines/sources/<source>/source.ts`, discovered by
 * sources.ts): adding a source is adding its folder, never editing these lists.
 */

export { CURVE_REGISTRIES } from "./curve/source.ts";

/** The endpoints of `sources` keyed by `<source>.<entity>` (sources in order, each source's endpoints in declaration order). */
export function endpointsOf(sources: readonly SourceDeclaration[]): Record<string, Endpoint> {
  return Object.fromEntries(sources.flatMap((s) => s.endpoints).map((e) => [e.key, e]));
}

/** Every endpoint the build knows, keyed by `<source>.<entity>` (endpointsOf the discovered SOURCES). */
export const ENDPOINTS: Record<string, Endpoint> = endpointsOf(SOURCES);

/**
 * Freshness window of every endpoint that declares one (`Endpoint.currentWindowSec`), as the rows of
 * the build table `source_current_windows` (endpoint key, its raw table, window in seconds), sorted
 * by endpoint. Models join on `raw_table` (a string literal naming an endpoint key such as
 * `defillama.stablecoins` would read as a dependency on the model of that name). Throws when two
 * endpoints of one raw table declare windows.
 */
export function sourceCurrentWindows(): { endpoint: string; raw_table: string; window_sec: number }[] {
  const rows = Object.values(ENDPOINTS)
    .filter((e) => e.currentWindowSec !== undefined)
    .map((e) => ({ endpoint: e.key, raw_table: e.table.name, window_sec: e.currentWindowSec as number }))
    .sort((a, b) => a.endpoint.localeCompare(b.endpoint));
  const tables = new Set(rows.map((r) => r.raw_table));
  if (tables.size !== rows.length) throw new Error("two endpoints of one raw table declare a freshness window");
  return rows;
}

/** Base URL per source of `sources` that declares one (`baseUrl`), keyed by source (circuit) name. */
export function baseUrlsOf(sources: readonly SourceDeclaration[]): Record<string, string> {
  return Object.fromEntries(sources.flatMap((s) => (s.baseUrl === undefined ? [] : [[s.name, s.baseUrl]])));
}

/** Base URL per live source (circuit name): baseUrlsOf the discovered SOURCES. */
export const SOURCE_BASE_URLS: Record<string, string> = baseUrlsOf(SOURCES);

/** Distinct raw tables (several endpoints may share one, e.g. `raw_price_history`). */
export function rawTables(): RawTable[] {
  const seen = new Map<string, RawTable>();
  for (const e of Object.values(ENDPOINTS)) if (!seen.has(e.table.name)) seen.set(e.table.name, e.table);
  return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The live capture plan: which endpoint calls `capture` makes, each source's `livePlan` in folder
 * order (`sources`: the discovered SOURCES). Per-coin DefiLlama detail and CoinGecko market charts are fetched for the registry coins
 * listed in `detailLlamaIds` / `chartGeckoIds`; Bluechip ratings for `bluechipSlugs` (one call per
 * slug); live reserves for every configured reserve adapter (`RESERVE_ADAPTERS`); the USDS status from
 * Ethereum (`usds.status`, read over JSON-RPC: skipped unless `BALLAST_RPC_ETHEREUM` is set).
 */
export function liveCapturePlan(opts: LivePlanOptions, sources: readonly SourceDeclaration[] = SOURCES): CaptureStep[] {
  return sources.flatMap((s) => s.livePlan?.(opts) ?? []);
}
