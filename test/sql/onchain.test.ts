import { readFileSync } from "node:fs";
import { join } from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../build/duckdb.ts";
import { loadAndModel } from "../../build/stages/model.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";

// A build as of 2025-10-31 (after PYUSD's 2025-10-15 300-trillion mint and its burn). Expected values
// are read from the recorded CSV here, not from the code under test.
const pyusd = Papa.parse<Record<string, string>>(
  readFileSync(join(CAPTURE_DIR, "bhemen-crypto-insights/pyusd/pyusd_supply_events.csv"), "utf8"),
  { header: true, skipEmptyLines: true },
).data;
const bigMint = must(
  pyusd.find((r) => r.blockNumber === "23585095"),
  "the PYUSD CSV row of block 23585095",
);
const bigBurn = must(
  pyusd.find((r) => r.blockNumber === "23585206"),
  "the PYUSD CSV row of block 23585206",
);
const DAY = Date.parse("2025-10-15T00:00:00Z") / 1000;

let db: Db;
beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  ({ db } = await loadAndModel({ asOf: Date.parse("2025-10-31T00:00:00Z") / 1000, captureDir: CAPTURE_DIR }));
});
afterAll(() => db?.close());

describe("PYUSD 2025-10-15: the 300-trillion round trip is not issuance", () => {
  it("the 300-trillion mint is valued as a USD peg: USD = the CSV value / 1e6 (x 1), basis par", async () => {
    const [m] = await db.all<{ usd: number; price: number; basis: string }>(
      "select amount_usd_at_event as usd, price_usd_at_event as price, valuation_basis as basis from mint_burn_events where block_number = 23585095",
    );
    expect(m).toEqual({ usd: Number(bigMint.value) / 1e6, price: 1, basis: "par" });
  });

  it("the mint and its burn 111 blocks later pair as a fast round trip", async () => {
    expect(bigMint.value).toBe("300000000000000000000");
    expect(Number(bigBurn.blockNumber) - Number(bigMint.blockNumber)).toBe(111);
    const rows = await db.all<{
      tx_hash: string;
      direction: string;
      flow_type: string;
      roundtrip_pair_id: string;
      amount: string;
    }>(
      "select tx_hash, direction, flow_type, roundtrip_pair_id, amount_raw::varchar as amount from mint_burn_events where block_number in (23585095, 23585206) order by block_number",
    );
    expect(rows.map((r) => [r.tx_hash, r.direction, r.flow_type, r.amount])).toEqual([
      [`0x${bigMint.transactionHash}`, "mint", "fast_roundtrip", bigMint.value],
      [`0x${bigBurn.transactionHash}`, "burn", "fast_roundtrip", bigBurn.value],
    ]);
  });

  it("the day's standard flows equal the CSV's other mints and burns that day (token units)", async () => {
    const day = pyusd.filter(
      (r) => Number(r.timestamp) >= DAY && Number(r.timestamp) < DAY + 86400 && r !== bigMint && r !== bigBurn,
    );
    const sum = (ev: string) => day.filter((r) => r.event === ev).reduce((s, r) => s + BigInt(r.value), 0n);
    const [flows] = await db.all<{ minted: string; burned: string }>(
      `select sum(minted_native)::varchar as minted, sum(burned_native)::varchar as burned from mint_burn_hourly
       where stablecoin_id = 'pyusd-paypal' and hour_ts >= ${DAY} and hour_ts < ${DAY + 86400}`,
    );
    const excluded = await db.all<{ n: number }>(
      `select count(*)::integer as n from mint_burn_events where stablecoin_id = 'pyusd-paypal' and flow_type <> 'standard' and ts >= ${DAY} and ts < ${DAY + 86400}`,
    );
    // only the pair is excluded that day (0x2fb0…'s 300 M burn before and re-mint after are ordinary flows)
    expect(excluded[0].n).toBe(2);
    // the hourly aggregate counts them in the hours they happened (what windowed excludedEventCounts sum)
    const hourOf = (r: Record<string, string>) => Number(r.timestamp) - (Number(r.timestamp) % 3600);
    const hourly = await db.all<{
      hour_ts: number;
      n: number;
    }>(`select hour_ts::integer as hour_ts, fast_roundtrip_count::integer as n from mint_burn_hourly
       where stablecoin_id = 'pyusd-paypal' and fast_roundtrip_count > 0 and hour_ts >= ${DAY} and hour_ts < ${DAY + 86400} order by hour_ts`);
    const expectedHours = new Map<number, number>();
    for (const r of [bigMint, bigBurn]) expectedHours.set(hourOf(r), (expectedHours.get(hourOf(r)) ?? 0) + 1);
    expect(hourly.map((h) => [h.hour_ts, h.n])).toEqual([...expectedHours.entries()].sort((a, b) => a[0] - b[0]));
    expect(Number(flows.minted)).toBeCloseTo(Number(sum("SupplyIncreased")) / 1e6, 2);
    expect(Number(flows.burned)).toBeCloseTo(Number(sum("SupplyDecreased")) / 1e6, 2);
    // the figures of docs/methodology/onchain.md ("On-chain freezes and mint/burn flows"): 317 M minted, 606 M burned
    expect(Number(sum("SupplyDecreased")) / 1e6).toBeCloseTo(606_384_065.81, 2);
    expect(Number(sum("SupplyIncreased")) / 1e6).toBeCloseTo(316_972_855.87, 2);
    expect(day.filter((r) => r.event === "SupplyDecreased")).toHaveLength(7);
    expect(Number(flows.minted)).toBeLessThan(1e9);
    expect(Number(flows.minted) - Number(flows.burned)).toBeGreaterThan(-1e9);
  });
});
