import type { SourceDeclaration } from "../types.ts";
import { RESERVE_ADAPTERS, RESERVES_BASE_URL, reserveCompositionEndpoint } from "./reserves.ts";

/** Live reserve compositions: one call per configured reserve adapter (RESERVE_ADAPTERS); nothing recorded. */
export const reservesSource: SourceDeclaration = {
  kind: "source",
  name: "reserves",
  endpoints: [reserveCompositionEndpoint],
  baseUrl: RESERVES_BASE_URL,
  livePlan: () =>
    RESERVE_ADAPTERS.map((a) => ({ endpoint: "reserves.composition", params: { stablecoinId: a.stablecoinId } })),
  badRows: {
    "reserves.composition": {
      payload: {
        stablecoinId: "usdt-tether",
        adapter: "json-attestation",
        totalUsd: 100,
        reportedAt: 1757200000,
        maxAgeSec: 86400,
        components: [
          { name: "T-bills", valueUsd: 90, pct: 90 },
          { name: "Cash", valueUsd: -1, pct: 10 },
        ],
      },
      params: { stablecoinId: "usdt-tether" },
    },
  },
};
