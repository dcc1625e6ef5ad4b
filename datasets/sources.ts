/**
 * Upstreams of the public datasets with their licence notes, as recorded in `shared/data/MANIFEST.md`
 * (the recorded inputs' provenance). A datapackage lists the entries its dataset names; keep the
 * attribution next to any redistributed copy.
 */
export interface DatasetSource {
  title: string;
  /** Upstream API or repository page. */
  path: string;
  /** Licence as recorded: SPDX name when the repo has a licence file, otherwise null. */
  license: string | null;
  /** The licence note of MANIFEST.md. */
  licenceNote: string;
}

const NO_LICENCE =
  "no licence file found in the source repository; the facts come from the upstream's public API, whose own terms apply; keep this attribution";

export const DATASET_SOURCES = {
  "defillama-stablecoins": {
    title: "DefiLlama /stablecoins list (recorded via repo ZacheryGlass/StablecoinWatch)",
    path: "https://github.com/ZacheryGlass/StablecoinWatch",
    license: null,
    licenceNote: NO_LICENCE,
  },
  "defillama-peggedassets": {
    title: "DefiLlama pegged-asset metadata (repo DefiLlama/peggedassets-server)",
    path: "https://github.com/DefiLlama/peggedassets-server",
    license: null,
    licenceNote: `${NO_LICENCE} (package.json has no licence field)`,
  },
  "defillama-history": {
    title: "DefiLlama stablecoin price and supply charts (recorded via repo check-sked/crypto_data_resources)",
    path: "https://github.com/check-sked/crypto_data_resources",
    license: null,
    licenceNote: NO_LICENCE,
  },
  coingecko: {
    title:
      "CoinGecko markets and daily charts (recorded via repos ZacheryGlass/StablecoinWatch, bhemen/crypto_insights, bertrandbuild/stablesafe)",
    path: "https://www.coingecko.com/en/api",
    license: null,
    licenceNote: NO_LICENCE,
  },
  "coingecko-marketcap": {
    title: "CoinGecko market-cap history (repo partrita/stablecoin-tracker)",
    path: "https://github.com/partrita/stablecoin-tracker",
    license: "MIT",
    licenceNote: "MIT (repository licence); the data comes from CoinGecko, whose terms apply",
  },
  binance: {
    title: "Binance spot 1-minute USDC/USDT klines, SVB week 2023 (repo nl2992/ICAIF_stablecoin-contagion-network)",
    path: "https://github.com/nl2992/ICAIF_stablecoin-contagion-network",
    license: "MIT",
    licenceNote: "MIT (repository licence); data = Binance public market data",
  },
  ecb: {
    title: "ECB euro foreign-exchange reference rates (repo h0tbird/eurofxref)",
    path: "https://github.com/h0tbird/eurofxref",
    license: null,
    licenceNote: "no licence file; data © European Central Bank, reusable with source attribution",
  },
  "pharos-watch": {
    title: "Pharos registry extract, stablecoin cemetery and tracked freeze contracts (repo TokenBrice/pharos-watch)",
    path: "https://github.com/TokenBrice/pharos-watch",
    license: null,
    licenceNote: `${NO_LICENCE} (transcribed and verified)`,
  },
  "onchain-logs": {
    title:
      "Decoded on-chain admin logs: USDT, USDP, PYUSD (repos bhemen/usdt, bhemen/paxos-coins, bhemen/crypto_insights)",
    path: "https://github.com/bhemen",
    license: null,
    licenceNote: "no licence file found; the facts are public Ethereum logs",
  },
} satisfies Record<string, DatasetSource>;

export type SourceId = keyof typeof DATASET_SOURCES;
