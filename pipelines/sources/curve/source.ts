import type { SourceDeclaration } from "../types.ts";
import { CURVE_BASE_URL, curvePoolsEndpoint } from "./curve.ts";

/** Curve registries the live capture reads (`getPools/{chain}/{registry}`). */
export const CURVE_REGISTRIES: [string, string][] = [
  ["ethereum", "main"],
  ["ethereum", "factory-stable-ng"],
];

/** The Curve API's pool lists: live only (one call per registry of CURVE_REGISTRIES), nothing recorded. */
export const curveSource: SourceDeclaration = {
  kind: "source",
  name: "curve",
  endpoints: [curvePoolsEndpoint],
  baseUrl: CURVE_BASE_URL,
  livePlan: () =>
    CURVE_REGISTRIES.map(([chain, registry]) => ({ endpoint: "curve.pools", params: { chain, registry } })),
  badRows: {
    "curve.pools": {
      payload: {
        success: true,
        data: {
          poolData: [
            {
              address: "0xP",
              usdTotal: 1e6,
              coins: [{ address: "0xA", symbol: "USDC", decimals: 6 }, { symbol: "x" }],
            },
            5,
          ],
        },
      },
      params: { chain: "ethereum", registry: "main" },
    },
  },
};
