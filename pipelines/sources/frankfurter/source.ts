import { utcDayStart } from "../time.ts";
import type { SourceDeclaration } from "../types.ts";
import { ECB_TIME, FRANKFURTER_BASE_URL, fxRatesEndpoint, readEcbHistCsv } from "./frankfurter.ts";

/** Frankfurter's ECB reference rates (lineage family `ecb`): live from `fxStart`, and the recorded ECB history. */
export const frankfurterSource: SourceDeclaration = {
  kind: "source",
  name: "frankfurter",
  endpoints: [fxRatesEndpoint],
  baseUrl: FRANKFURTER_BASE_URL,
  livePlan: (opts) => [{ endpoint: "frankfurter.rates", params: { base: "EUR", start: opts.fxStart } }],
  recorded: [
    {
      endpoint: "frankfurter.rates",
      file: "ecb-eurofxref/eurofxref-hist.csv",
      observedAt: utcDayStart("2025-05-11"),
      time: ECB_TIME,
      read: readEcbHistCsv,
    },
  ],
  badRows: {
    "frankfurter.rates": { payload: { base: "EUR", rates: { "2023-03-10": { USD: 1.06 }, "2023-03-09": "nope" } } },
  },
};
