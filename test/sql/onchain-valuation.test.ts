import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordedCapture } from "../helpers/capture.ts";
import type { Db } from "../../build/duckdb.ts";
import { loadAndModel } from "../../build/stages/model.ts";
import type { OnchainEventRow } from "../../pipelines/onchain/contract.ts";
import type { Registry } from "../../pipelines/registry/schema.ts";
import { registryCoin } from "../helpers/registry-coin.ts";

// On-chain events of three coins with different pegs, valued by the one supply valuation rule
// (docs/choices.md "Valuation"). Expected values are worked by hand from the inputs below.
const AS_OF = Date.parse("2025-09-07T00:00:00Z") / 1000;
const EVENT_TS = Date.parse("2025-09-06T12:00:00Z") / 1000;
const EUR_USD = 1.1;
/** The fff-float event's 1234.567890123456789012 units (raw amount at 18 decimals) as the nearest double. */
const FFF_UNITS = Number("1234.567890123456789012");
const registry: Registry = {
  eventFamilies: {},
  bridges: [],
  coins: [
    registryCoin("aaa-one", "1", "peggedUSD", "USD"),
    registryCoin("eee-euro", "2", "peggedEUR", "EUR"),
    // a floating peg with no price anywhere: its valuation is unavailable
    registryCoin("fff-float", "3", "peggedVAR", "VAR", { floatingPeg: true, pegMechanism: "crypto-backed" }),
  ],
  chains: [{ id: "ethereum", name: "Ethereum" }],
};
const CONTRACT = "0x00000000000000000000000000000000000000c0";
let logIndex = 0;
/** One decoded log of `stablecoinId` at EVENT_TS (a fresh transaction each). */
const row = (
  stablecoinId: string,
  kind: OnchainEventRow["kind"],
  amountRaw: string | null,
  decimals: number,
): OnchainEventRow => {
  const i = logIndex++;
  const tx = `0x${i.toString(16).padStart(64, "0")}`;
  return {
    id: `ethereum-${tx}-${i}`,
    chain_id: "ethereum",
    stablecoin_id: stablecoinId,
    config_key: `${stablecoinId}:ethereum:${CONTRACT}:test`,
    contract_address: CONTRACT,
    family: "test",
    event_name: kind,
    event_signature: `${kind}()`,
    topic0: null,
    kind,
    address: `0x${"a".repeat(39)}${i}`,
    amount_raw: amountRaw,
    decimals,
    amount_source: amountRaw === null ? "unavailable" : "event",
    amount_status: amountRaw === null ? "recoverable_pending" : "resolved",
    tx_hash: tx,
    tx_from: null,
    block_number: 1000 + i,
    block_hash: null,
    log_index: i,
    ts: EVENT_TS,
    origin: "recorded",
  };
};
const cap = (endpoint: string, payload: unknown) => recordedCapture(endpoint, payload, AS_OF);

let db: Db;
beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  ({ db } = await loadAndModel({
    asOf: AS_OF,
    registry,
    captures: [
      // the list (no price for any coin: USD and EUR pegs need none, the floating one gets none)
      cap("defillama.stablecoins", {
        peggedAssets: [
          ["1", "AAA", "peggedUSD"],
          ["2", "EEE", "peggedEUR"],
          ["3", "FFF", "peggedVAR"],
        ].map(([id, symbol, peg]) => ({
          id,
          name: symbol,
          symbol,
          pegType: peg,
          pegMechanism: "fiat-backed",
          price: null,
          chainCirculating: {},
          circulating: { [peg]: 100 },
          circulatingPrevDay: { [peg]: 100 },
          circulatingPrevWeek: { [peg]: 100 },
          circulatingPrevMonth: { [peg]: 100 },
        })),
      }),
      cap("frankfurter.rates", { base: "EUR", rates: { "2025-09-05": { USD: EUR_USD } } }),
      cap("onchain.events", {
        rows: [
          row("aaa-one", "mint", "2500000", 6), // 2.5 USD-pegged units
          row("eee-euro", "mint", "1000000", 6), // 1 EUR unit, ECB rate of 2025-09-05 carried to 2025-09-06
          row("eee-euro", "destroy", "2000000", 6), // 2 EUR units
          row("fff-float", "mint", "1234567890123456789012", 18), // 1234.567890123456789012 units, no price
          row("fff-float", "blacklist", null, 18),
        ],
      }),
    ],
  }));
});
afterAll(() => db?.close());

describe("on-chain events are valued by the supply valuation rule", () => {
  it("mint/burn: USD peg 1 x units, EUR at the ECB rate, a floating peg without price null (never zero)", async () => {
    const rows = await db.all<{
      stablecoin_id: string;
      amount_native: number;
      price_usd_at_event: number | null;
      amount_usd_at_event: number | null;
      valuation_basis: string;
    }>(
      "select stablecoin_id, amount_native, price_usd_at_event, amount_usd_at_event, valuation_basis from mint_burn_events order by stablecoin_id",
    );
    expect(rows).toEqual([
      {
        stablecoin_id: "aaa-one",
        amount_native: 2.5,
        price_usd_at_event: 1,
        amount_usd_at_event: 2.5,
        valuation_basis: "par",
      },
      {
        stablecoin_id: "eee-euro",
        amount_native: 1,
        price_usd_at_event: expect.closeTo(EUR_USD, 12),
        amount_usd_at_event: expect.closeTo(EUR_USD, 12),
        valuation_basis: "fx",
      },
      {
        stablecoin_id: "fff-float",
        amount_native: FFF_UNITS,
        price_usd_at_event: null,
        amount_usd_at_event: null,
        valuation_basis: "unavailable",
      },
    ]);
  });

  it("hourly flows: the unpriced coin's USD sums are null and its event counted as unpriced", async () => {
    const rows = await db.all<{
      stablecoin_id: string;
      minted_usd: number | null;
      minted_native: number;
      mint_count: number;
      unpriced_mint_count: number;
    }>(
      "select stablecoin_id, minted_usd, minted_native, mint_count::integer as mint_count, unpriced_mint_count::integer as unpriced_mint_count from mint_burn_hourly order by stablecoin_id",
    );
    expect(rows).toEqual([
      { stablecoin_id: "aaa-one", minted_usd: 2.5, minted_native: 2.5, mint_count: 1, unpriced_mint_count: 0 },
      {
        stablecoin_id: "eee-euro",
        minted_usd: expect.closeTo(EUR_USD, 12),
        minted_native: 1,
        mint_count: 1,
        unpriced_mint_count: 0,
      },
      {
        stablecoin_id: "fff-float",
        minted_usd: null,
        minted_native: FFF_UNITS,
        mint_count: 1,
        unpriced_mint_count: 1,
      },
    ]);
  });

  it("freeze ledger: the same rule; an event without an amount has no USD", async () => {
    const rows = await db.all<{
      stablecoin_id: string;
      event_type: string;
      amount_decimal: string | null;
      amount_usd_at_event: number | null;
      valuation_basis: string;
    }>(
      "select stablecoin_id, event_type, amount_decimal, amount_usd_at_event, valuation_basis from blacklist_events order by stablecoin_id",
    );
    expect(rows).toEqual([
      {
        stablecoin_id: "eee-euro",
        event_type: "destroy",
        amount_decimal: "2",
        amount_usd_at_event: expect.closeTo(2 * EUR_USD, 12),
        valuation_basis: "fx",
      },
      {
        stablecoin_id: "fff-float",
        event_type: "blacklist",
        amount_decimal: null,
        amount_usd_at_event: null,
        valuation_basis: "unavailable",
      },
    ]);
  });
});
