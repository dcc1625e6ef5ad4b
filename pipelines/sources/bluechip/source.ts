import type { SourceDeclaration } from "../types.ts";
import { BLUECHIP_BASE_URL, bluechipRatingsEndpoint } from "./bluechip.ts";

/** Bluechip's stablecoin ratings: live only (one call per configured slug), nothing recorded. */
export const bluechipSource: SourceDeclaration = {
  kind: "source",
  name: "bluechip",
  endpoints: [bluechipRatingsEndpoint],
  baseUrl: BLUECHIP_BASE_URL,
  livePlan: (opts) => (opts.bluechipSlugs ?? []).map((slug) => ({ endpoint: "bluechip.ratings", params: { slug } })),
  badRows: {
    "bluechip.ratings": {
      payload: { data: [{ name: "USDC", symbol: "USDC", grade: "A", date_of_rating: "2024-11-05" }, { grade: "Z" }] },
      params: { slug: "usdc" },
    },
  },
};
