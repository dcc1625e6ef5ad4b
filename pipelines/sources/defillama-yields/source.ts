import type { SourceDeclaration } from "../types.ts";
import {
  DEFILLAMA_YIELDS_BASE_URL,
  OPEN_DEFI_YIELDS_TIME,
  readOpenDefiYieldsCsv,
  yieldPoolsEndpoint,
} from "./defillama-yields.ts";

/** open-defi-data's yields head sample: every row's `scrapedAt` is 2026-09-02T11:57:41.317Z (MANIFEST §9), observed to the second. */
const OPEN_DEFI_YIELDS_OBSERVED_AT = Math.floor(Date.parse("2026-09-02T11:57:41.317Z") / 1000);

/** DefiLlama's yields server (`/pools`, lineage family `defillama`): live, and one recorded head sample. */
export const defillamaYieldsSource: SourceDeclaration = {
  kind: "source",
  name: "defillama-yields",
  endpoints: [yieldPoolsEndpoint],
  baseUrl: DEFILLAMA_YIELDS_BASE_URL,
  livePlan: () => [{ endpoint: "defillama-yields.pools", params: {} }],
  recorded: [
    // DefiLlama `/pools` head sample (104 pools, symbols only: no token addresses, no volumes).
    {
      endpoint: "defillama-yields.pools",
      file: "open-defi-data/yields.head.csv",
      observedAt: OPEN_DEFI_YIELDS_OBSERVED_AT,
      time: OPEN_DEFI_YIELDS_TIME,
      read: readOpenDefiYieldsCsv(OPEN_DEFI_YIELDS_OBSERVED_AT),
    },
  ],
  badRows: {
    "defillama-yields.pools": {
      payload: {
        status: "success",
        data: [
          { pool: "p1", chain: "Ethereum", project: "maple", symbol: "USDC", tvlUsd: 1e9, apy: 5 },
          { pool: "p2", tvlUsd: 1 },
          7,
        ],
      },
    },
  },
};
