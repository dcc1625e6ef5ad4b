import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { selectAtAsOf } from "../../build/captures.ts";
import { readOpenDefiStablecoinsJson, stablecoinsEndpoint } from "../../pipelines/sources/defillama/defillama.ts";
import { RECORDED_CAPTURES } from "../../pipelines/sources/recorded-captures.ts";
import { sourceFamily } from "../../pipelines/sources/lineage.ts";
import type { Capture, CaptureInfo } from "../../pipelines/sources/types.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";

const FILE = "conorscode-open-defi-data/stablecoins.2026-09-02.json";
/** 2026-09-02T11:57:41Z: the run's newest `scrapedAt` (…40.725Z) rounded up to the second. */
const OBSERVED_AT = Date.UTC(2026, 8, 2, 11, 57, 41) / 1000;

const record = (over: Record<string, unknown> = {}) => ({
  id: "1",
  name: "Tether",
  symbol: "USDT",
  pegType: "peggedUSD",
  pegMechanism: "fiat-backed",
  circulatingUsd: 1000,
  circulatingPrevDayUsd: 990,
  circulatingPrevWeekUsd: 950,
  circulatingPrevMonthUsd: 900,
  price: 0.999,
  chains: ["Tron", "Ethereum"],
  scrapedAt: "2026-09-02T11:57:40.724Z",
  ...over,
});

const toCapture = (payload: unknown, observedAt = OBSERVED_AT): Capture => ({
  endpoint: "defillama.stablecoins",
  params: {},
  observedAt,
  origin: "recorded",
  path: FILE,
  sha256: "x",
  payload,
});

describe("open-defi-data's normalised DefiLlama list (reader)", () => {
  it("maps each record to a /stablecoins asset with peggedUSD buckets, no buckets for a null USD value", () => {
    const text = JSON.stringify([
      record(),
      record({
        id: "50",
        symbol: "EURC",
        pegType: "peggedEUR",
        circulatingUsd: null,
        circulatingPrevDayUsd: null,
        circulatingPrevWeekUsd: null,
        circulatingPrevMonthUsd: null,
        price: 1.1568,
      }),
    ]);
    const out = readOpenDefiStablecoinsJson(OBSERVED_AT)(text);
    expect(out.dropped).toEqual({});
    const { peggedAssets } = out.captures[0].payload as { peggedAssets: Record<string, unknown>[] };
    expect(peggedAssets[0]).toMatchObject({
      id: "1",
      symbol: "USDT",
      pegType: "peggedUSD",
      price: 0.999,
      circulating: { peggedUSD: 1000 },
      circulatingPrevDay: { peggedUSD: 990 },
      circulatingPrevWeek: { peggedUSD: 950 },
      circulatingPrevMonth: { peggedUSD: 900 },
      chains: ["Tron", "Ethereum"],
    });
    expect(peggedAssets[1].circulating).toBeUndefined();
    expect(peggedAssets[1].price).toBe(1.1568);

    // through the list endpoint's parser: USD buckets (after the 2025-12-01 switch), none for EURC
    const rows = stablecoinsEndpoint.toRows(out.captures[0].payload, toCapture(out.captures[0].payload)).rows;
    expect(rows.map((r) => [r.llama_id, r.circulating_unit, JSON.parse(String(r.buckets_json))])).toEqual([
      [
        "1",
        "usd",
        {
          current: { peggedUSD: 1000 },
          circulatingPrevDay: { peggedUSD: 990 },
          circulatingPrevWeek: { peggedUSD: 950 },
          circulatingPrevMonth: { peggedUSD: 900 },
        },
      ],
      ["50", "usd", {}],
    ]);
    expect(rows[0].gecko_id).toBeNull();
    expect(rows[0].chain_buckets_json).toBe("{}");
  });

  it("skips and counts invalid records and records scraped after the declared observation", () => {
    const text = JSON.stringify([
      record(),
      record({ id: "2", circulatingUsd: "lots" }),
      { name: "no id" },
      record({ id: "3", scrapedAt: "2026-09-02T11:57:41.001Z" }),
      record({ id: "4", scrapedAt: "yesterday" }),
      record({ id: "5", scrapedAt: "2026-09-02T11:57:40" }), // no zone
    ]);
    const out = readOpenDefiStablecoinsJson(OBSERVED_AT)(text);
    expect(out.dropped).toEqual({
      "record-invalid-circulatingUsd": 1,
      "record-invalid-id": 1,
      "scraped-at-after-observation": 1,
      "scraped-at-invalid": 2,
    });
    const { peggedAssets } = out.captures[0].payload as { peggedAssets: { id: string }[] };
    expect(peggedAssets.map((a) => a.id)).toEqual(["1"]);
  });

  it("fails the file when it is not a JSON array of records", () => {
    expect(() => readOpenDefiStablecoinsJson(OBSERVED_AT)('{"peggedAssets": []}')).toThrow(/expected a JSON array/);
    expect(() => readOpenDefiStablecoinsJson(OBSERVED_AT)("[{")).toThrow();
  });

  it("reads the recorded 2026-09-02 file whole: 423 coins, the MANIFEST's total and USDT", () => {
    const rc = must(
      RECORDED_CAPTURES.find((c) => c.file === FILE),
      "recorded capture",
    );
    expect(rc.endpoint).toBe("defillama.stablecoins");
    expect(rc.observedAt).toBe(OBSERVED_AT);
    expect(sourceFamily("defillama")).toBe("defillama");
    const text = readFileSync(join(CAPTURE_DIR, FILE), "utf8");
    const out = rc.read(text);
    expect(out.dropped).toEqual({});
    const { peggedAssets } = out.captures[0].payload as {
      peggedAssets: { id: string; symbol: string; circulating?: { peggedUSD: number } }[];
    };
    expect(peggedAssets.length).toBe(423);
    // MANIFEST §13: Σ circulatingUsd in file order = 310374987729.4637 (= summary.totals.stablecoinSupplyUsd)
    const total = peggedAssets.reduce((s, a) => s + (a.circulating?.peggedUSD ?? 0), 0);
    expect(total).toBeCloseTo(310374987729.4637, 3);
    expect(peggedAssets.find((a) => a.id === "1")?.circulating?.peggedUSD).toBeCloseTo(183347436267.43622, 3);
    // 88 non-USD pegs carry no USD supply
    expect(peggedAssets.filter((a) => a.circulating === undefined).length).toBe(88);
    const rows = stablecoinsEndpoint.toRows(out.captures[0].payload, toCapture(out.captures[0].payload));
    expect(rows.rows.length).toBe(423);
    // USTC (id 3) carries price 0 upstream: the list parser nulls it and counts it
    expect(rows.dropped).toEqual({ "price-invalid": 1 });
    expect(rows.rows.find((r) => r.llama_id === "3")?.price).toBeNull();
  });

  it("is the list a build reads from its observation on, never before (snapshot: the newest list at or before as-of)", () => {
    const info = (path: string, observedAt: number): CaptureInfo => ({
      endpoint: "defillama.stablecoins",
      params: {},
      observedAt,
      origin: "recorded",
      path,
      sha256: "x",
    });
    const older = must(
      RECORDED_CAPTURES.find((c) => c.endpoint === "defillama.stablecoins" && c.file !== FILE),
      "2025 list",
    );
    const all = [info(older.file, older.observedAt), info(FILE, OBSERVED_AT)];
    const pick = (iso: string) => selectAtAsOf(all, Date.parse(iso) / 1000).map((c) => c.path);
    expect(pick("2026-09-02T00:00:00Z")).toEqual([older.file]);
    expect(pick("2026-09-02T11:57:40Z")).toEqual([older.file]);
    expect(pick("2026-09-02T11:57:41Z")).toEqual([FILE]);
    expect(pick("2026-09-03T00:00:00Z")).toEqual([FILE]);
  });
});
