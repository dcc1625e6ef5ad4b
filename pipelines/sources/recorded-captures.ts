import { SOURCES } from "./sources.ts";
import type { RecordedCapture, SourceDeclaration } from "./types.ts";

/**
 * The real recorded inputs in `../shared/data` (see its MANIFEST.md, incl. "Time zones and
 * lineage") and which reader turns each into the payload the live upstream endpoint would have
 * returned, so live and recorded captures share one parser. Each source declares its recorded files
 * (`SourceDeclaration.recorded`, in `pipelines/sources/<source>/source.ts`, readers beside it); this
 * module is their view, and re-exports the readers under their old names.
 */

export type { ReaderOutput, ReaderProblem, RecordedCapture } from "./types.ts";
export { readJsonFile } from "./file-formats.ts";
export { readAlchemyPriceCsv } from "./alchemy/alchemy.ts";
export { readTotalSupplySampleCsv } from "./onchain/supply-samples.ts";
export { readBinanceKlinesCsv } from "./binance/binance.ts";
export { readCoingeckoRangeBarsJson } from "./coingecko/price-bars.ts";
export { readCoingeckoChartExportCsv, readCoingeckoMarketCapScrapeCsv } from "./coingecko/coingecko.ts";
export { MARKET_CAP_SCRAPE_NAMES } from "./coingecko/source.ts";
export { readOpenDefiYieldsCsv } from "./defillama-yields/defillama-yields.ts";
export {
  readDefillamaChainWideCsv,
  readDefillamaChartCsv,
  readDefillamaPricesWideCsv,
  readOpenDefiStablecoinsJson,
} from "./defillama/defillama.ts";
export { readEcbHistCsv } from "./frankfurter/frankfurter.ts";
export { readBhemenUsdpCsv, readBhemenUsdtCsv, readPyusdSupplyCsv } from "./onchain/onchain-events.ts";

/** The recorded files of `sources`: each source's `recorded` files, sources in order (the load order). */
export function recordedCapturesOf(sources: readonly SourceDeclaration[]): RecordedCapture[] {
  return sources.flatMap((s) => s.recorded ?? []);
}

/**
 * Every recorded input the embedded default build reads, relative to BALLAST_CAPTURE_DIR
 * (recordedCapturesOf the discovered SOURCES, in folder order).
 */
export const RECORDED_CAPTURES: RecordedCapture[] = recordedCapturesOf(SOURCES);
