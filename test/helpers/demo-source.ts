/**
 * The demo source the README's source recipe adds (test/recipes) and the discovery tests break on
 * purpose (test/unit/sources.test.ts): its one declaration (one endpoint, its live call, one recorded
 * file and its bad-row fixture) and its staging model, as file texts.
 */
export const DEMO_SOURCE = `import { z } from "zod";
import { readJsonFile } from "../file-formats.ts";
import { RowCollector } from "../parse-helpers.ts";
import type { SourceDeclaration } from "../types.ts";

const Row = z.object({ coin: z.string().min(1), price_usd: z.number().positive() });

export const demoSource: SourceDeclaration = {
  kind: "source",
  name: "demo",
  baseUrl: "https://demo.invalid/",
  endpoints: [
    {
      key: "demo.prices",
      source: "demo",
      lineage: { family: "demo", derivedFrom: null },
      time: { zone: "UTC", dailyBucket: "snapshot at observedAt (no daily points)" },
      mode: "snapshot",
      table: { name: "raw_demo__prices", columns: { coin: "VARCHAR", price_usd: "DOUBLE" } },
      payloadSchema: z.object({ prices: z.array(z.unknown()) }),
      rowSchema: Row,
      maxStalenessSec: 86400,
      toRows(payload, _capture, out) {
        const rc = new RowCollector(Row, out);
        for (const p of (payload as { prices: unknown[] }).prices) {
          const r = (p && typeof p === "object" ? p : {}) as { coin?: unknown; price?: unknown };
          if (typeof r.coin !== "string" || typeof r.price !== "number" || !(r.price > 0)) rc.drop("price-invalid");
          else rc.add({ coin: r.coin, price_usd: r.price });
        }
        return rc.result();
      },
      fetchLive: (client) => client.getJson("prices"),
    },
  ],
  livePlan: () => [{ endpoint: "demo.prices", params: {} }],
  recorded: [
    { endpoint: "demo.prices", file: "demo/prices.json", observedAt: 1700000000, time: { zone: "UTC", dailyBucket: "snapshot at observedAt (no daily points)" }, read: readJsonFile() },
  ],
  badRows: { "demo.prices": { payload: { prices: [{ coin: "usd-coin", price: 1 }, { coin: "x", price: -1 }] } } },
};
`;

/** The demo source's staging model (`stg_demo__prices.sql`). */
export const DEMO_STAGING = "select coin, price_usd from raw_demo__prices\n";
