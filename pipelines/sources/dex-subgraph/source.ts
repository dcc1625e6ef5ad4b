import type { SourceDeclaration } from "../types.ts";
import { DEX_SUBGRAPH_BASE_URL, dexSubgraphPoolsEndpoint } from "./dex-subgraph.ts";

/**
 * DEX subgraphs (pools by TVL): they need a configured gateway URL, so they are not in the default
 * live plan; nothing recorded.
 */
export const dexSubgraphSource: SourceDeclaration = {
  kind: "source",
  name: "dex-subgraph",
  endpoints: [dexSubgraphPoolsEndpoint],
  baseUrl: DEX_SUBGRAPH_BASE_URL,
  badRows: {
    "dex-subgraph.pools": {
      payload: {
        data: {
          pools: [
            {
              id: "0xP",
              feeTier: "100",
              totalValueLockedUSD: "1e6",
              token0: { id: "0xA", symbol: "USDC" },
              token1: { id: "0xB", symbol: "USDT" },
            },
            { id: "0xQ" },
          ],
        },
      },
      params: { subgraph: "s", chain: "ethereum" },
    },
  },
};
