import { utcDayStart } from "../time.ts";
import type { RecordedCapture, SourceDeclaration } from "../types.ts";
import { alchemyDailyPricesArchive, readAlchemyPriceCsv } from "./alchemy.ts";

/**
 * Alchemy's daily token prices (archive only: bhemen/crypto_insights' recordings, MANIFEST §3), a
 * copy of CoinGecko's series (lineage family `coingecko`, so its circuit counts with CoinGecko's).
 */
export const alchemySource: SourceDeclaration = {
  kind: "source",
  name: "alchemy",
  endpoints: [alchemyDailyPricesArchive],
  recorded: ["USDT:tether", "USDC:usd-coin", "DAI:dai", "USDe:ethena-usde", "USDS:usds"].map((s): RecordedCapture => {
    const [file, gecko] = s.split(":");
    return {
      endpoint: "alchemy.daily_prices",
      file: `bhemen-crypto-insights/stablecoin_prices/${file}.csv`,
      observedAt: utcDayStart("2025-02-21"),
      time: { zone: "UTC", dailyBucket: "00:00 UTC point (one row per UTC day)" },
      read: readAlchemyPriceCsv(gecko),
    };
  }),
  badRows: {
    "alchemy.daily_prices": {
      payload: { geckoId: "usd-coin", points: [{ date: "2023-03-11", price: "0.97" }, 17] },
    },
  },
};
