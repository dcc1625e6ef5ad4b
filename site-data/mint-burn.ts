import { z } from "zod";
import { explorerUrls } from "../pipelines/onchain/explorers.ts";
import { ledgerAmount } from "./ledger-amount.ts";
import { type Artifact, num } from "./contract.ts";
import { inputsAs } from "../pipelines/analytics/contract.ts";

export { MINT_BURN_METHODOLOGY, MINT_BURN_METHODOLOGY_LABEL } from "../pipelines/onchain/methodology.ts";

export const FLOW_TYPES = [
  "standard",
  "bridge_transfer",
  "atomic_roundtrip",
  "fast_roundtrip",
  "frozen_funds",
] as const;
/** Flow types kept out of the flow sums (counted per window in `excludedEventCounts`). */
export const EXCLUDED_FLOW_TYPES = ["atomic_roundtrip", "fast_roundtrip", "bridge_transfer", "frozen_funds"] as const;
export type ExcludedFlowType = (typeof EXCLUDED_FLOW_TYPES)[number];
/** Basis of a USD value: the supply valuation rule of the day (docs/choices.md "Valuation"; int_supply_valuation_daily). */
export const VALUATION_BASES = ["par", "fx", "fx-stale", "consensus", "unavailable"] as const;
export const BURN_TYPES = ["redemption", "bridge", "roundtrip", "frozen_funds"] as const;
export const FLOW_SCOPES = ["issuance", "bridge", "roundtrip", "enforcement"] as const;

/**
 * One mint or burn (`/api/mint-burn-events`). `flowType` classifies it (only `standard` enters flows);
 * `scope` groups flow types (`issuance` = standard); `burnType` is null for mints. Amounts: token units
 * (`amountNative`), exact base units (`amountRaw`), USD (`amountUsd` = amountNative × `priceUsd`, the
 * USD value of one token unit by the supply valuation rule of the event's UTC day: 1 for USD pegs,
 * `valuationBasis` par/fx/fx-stale/consensus; null when `unavailable` or the amount is unknown, never
 * zero). Times Unix s.
 */
export const MintBurnEventSchema = z.object({
  id: z.string(),
  stablecoin: z.string(),
  stablecoinId: z.string(),
  chainId: z.string(),
  direction: z.enum(["mint", "burn"]),
  flowType: z.enum(FLOW_TYPES),
  burnType: z.enum(BURN_TYPES).nullable(),
  scope: z.enum(FLOW_SCOPES),
  address: z.string(),
  amountNative: z.number().nullable(),
  amountRaw: z.string().nullable(),
  decimals: z.number().int(),
  amountUsd: z.number().nullable().describe("USD: amountNative × priceUsd; null when unavailable, never zero"),
  priceUsd: z
    .number()
    .nullable()
    .describe("USD per token unit on the event's UTC day by the supply valuation rule (1 for USD pegs)"),
  valuationBasis: z
    .enum(VALUATION_BASES)
    .describe(
      "Basis of priceUsd: par (USD peg), fx / fx-stale (ECB rate), consensus (accepted consensus price), unavailable",
    ),
  txHash: z.string(),
  txFrom: z.string().nullable(),
  blockNumber: z.number().int(),
  logIndex: z.number().int(),
  timestamp: z.number().int(),
  contractAddress: z.string(),
  configKey: z.string(),
  eventSignature: z.string(),
  roundtripPairId: z.string().nullable(),
  explorerTxUrl: z.string().nullable(),
  methodologyVersion: z.string(),
  origin: z.enum(["recorded", "live"]),
});
export type MintBurnEvent = z.infer<typeof MintBurnEventSchema>;

/**
 * A `mint_burn_events` mart row: text columns as the payload carries them; numeric columns `unknown`,
 * converted below (BIGINT and HUGEINT columns arrive as strings).
 */
type MintBurnEventRow = {
  id: MintBurnEvent["id"];
  symbol: string;
  stablecoin_id: string;
  chain_id: string;
  direction: MintBurnEvent["direction"];
  flow_type: MintBurnEvent["flowType"];
  burn_type: MintBurnEvent["burnType"];
  scope: MintBurnEvent["scope"];
  address: string;
  amount_raw: unknown;
  decimals: unknown;
  amount_usd_at_event: unknown;
  price_usd_at_event: unknown;
  valuation_basis: MintBurnEvent["valuationBasis"];
  tx_hash: string;
  tx_from: string | null;
  block_number: unknown;
  log_index: unknown;
  ts: unknown;
  contract_address: MintBurnEvent["contractAddress"];
  config_key: MintBurnEvent["configKey"];
  event_signature: MintBurnEvent["eventSignature"];
  roundtrip_pair_id: MintBurnEvent["roundtripPairId"];
  methodology_version: string;
  origin: MintBurnEvent["origin"];
};

/** `site-data/mint-burn-events.json`: every mint/burn, newest first (`timestamp` desc, `id` desc), and the coin ids the route accepts. */
export const MintBurnLedgerSchema = z.object({
  events: z.array(MintBurnEventSchema),
  stablecoinIds: z.array(z.string()),
});
export type MintBurnLedger = z.infer<typeof MintBurnLedgerSchema>;

const newestTs = (ts: number[]) => (ts.length ? Math.max(...ts) : null);

/** Mint/burn ledger for `/api/mint-burn-events` (filters and keyset cursors in api/queries/mint-burn.ts). */
export const mintBurnLedgerArtifact: Artifact = {
  key: "mint-burn",
  schemaVersion: "1.1.0",
  maxAgeSec: 900,
  schema: MintBurnLedgerSchema,
  outputs: { main: { path: "site-data/mint-burn-events.json", schema: MintBurnLedgerSchema } },
  description: "Mint/burn events of tracked supply contracts, classified, newest first.",
  queries: {
    events: "select * from mint_burn_events order by ts desc, id desc",
    coins: "select id from registry_coins order by id",
  },
  assemble(selected) {
    const rows = inputsAs<{ events: MintBurnEventRow; coins: { id: string } }>(selected);
    const events: MintBurnEvent[] = rows.events.map((r) => {
      return {
        id: r.id,
        stablecoin: r.symbol,
        stablecoinId: r.stablecoin_id,
        chainId: r.chain_id,
        direction: r.direction,
        flowType: r.flow_type,
        burnType: r.burn_type ?? null,
        scope: r.scope,
        address: r.address,
        ...ledgerAmount(r),
        amountUsd: num(r.amount_usd_at_event),
        priceUsd: num(r.price_usd_at_event),
        valuationBasis: r.valuation_basis,
        txHash: r.tx_hash,
        txFrom: r.tx_from ?? null,
        blockNumber: Number(r.block_number),
        logIndex: Number(r.log_index),
        timestamp: Number(r.ts),
        contractAddress: r.contract_address,
        configKey: r.config_key,
        eventSignature: r.event_signature,
        roundtripPairId: r.roundtrip_pair_id ?? null,
        explorerTxUrl: explorerUrls(r.chain_id, r.tx_hash, r.address).explorerTxUrl,
        methodologyVersion: r.methodology_version,
        origin: r.origin,
      };
    });
    const payload: MintBurnLedger = { events, stablecoinIds: rows.coins.map((r) => String(r.id)) };
    return {
      files: [{ path: mintBurnLedgerArtifact.outputs.main.path, payload, rows: events.length }],
      dataAsOf: newestTs(events.map((e) => e.timestamp)),
    };
  },
};

/**
 * One UTC hour of a coin's mints and burns (`hourTs`: Unix s of the hour start). Flow sums and counts
 * cover standard flows: token units (`*Native`), USD over priced events only (`*Usd`, null when none is
 * priced), unpriced ones counted. `excludedEventCounts`: that hour's events of each excluded flow type.
 */
export const FlowHourSchema = z.object({
  hourTs: z.number().int(),
  mintedUsd: z.number().nullable(),
  burnedUsd: z.number().nullable(),
  mintedNative: z.number(),
  burnedNative: z.number(),
  mintCount: z.number().int(),
  burnCount: z.number().int(),
  unpricedMintCount: z.number().int(),
  unpricedBurnCount: z.number().int(),
  excludedEventCounts: z.object(
    Object.fromEntries(EXCLUDED_FLOW_TYPES.map((t) => [t, z.number().int()])) as Record<ExcludedFlowType, z.ZodNumber>,
  ),
});
export type FlowHour = z.infer<typeof FlowHourSchema>;

/** `site-data/mint-burn-flows.json`: per coin with tracked supply contracts, its hours with any mint or burn (ascending). */
export const MintBurnHourlySchema = z.object({
  coins: z.array(
    z.object({
      stablecoinId: z.string(),
      symbol: z.string(),
      hourly: z.array(FlowHourSchema),
    }),
  ),
});
export type MintBurnHourly = z.infer<typeof MintBurnHourlySchema>;

/** Hourly flows the `/api/mint-burn-flows` windows are computed from (api/queries/mint-burn.ts). */
export const mintBurnFlowsArtifact: Artifact = {
  key: "mint-burn-flows",
  schemaVersion: "2.0.0",
  maxAgeSec: 900,
  schema: MintBurnHourlySchema,
  outputs: { main: { path: "site-data/mint-burn-flows.json", schema: MintBurnHourlySchema } },
  description: "Hourly standard mint/burn flows per coin, with each hour's excluded events counted per flow type.",
  queries: {
    coins: `select distinct t.stablecoin_id, upper(c.symbol) as symbol from registry_tracked_contracts t
      join registry_coins c on c.id = t.stablecoin_id where t.purpose = 'supply' order by t.stablecoin_id`,
    hourly: "select * from mint_burn_hourly order by stablecoin_id, hour_ts",
  },
  assemble(rows) {
    const coins = rows.coins.map((c) => ({
      stablecoinId: String(c.stablecoin_id),
      symbol: String(c.symbol),
      hourly: rows.hourly
        .filter((h) => h.stablecoin_id === c.stablecoin_id)
        .map((h) => ({
          hourTs: Number(h.hour_ts),
          mintedUsd: num(h.minted_usd),
          burnedUsd: num(h.burned_usd),
          mintedNative: Number(h.minted_native),
          burnedNative: Number(h.burned_native),
          mintCount: Number(h.mint_count),
          burnCount: Number(h.burn_count),
          unpricedMintCount: Number(h.unpriced_mint_count),
          unpricedBurnCount: Number(h.unpriced_burn_count),
          excludedEventCounts: Object.fromEntries(
            EXCLUDED_FLOW_TYPES.map((t) => [t, Number(h[`${t}_count`])]),
          ) as Record<ExcludedFlowType, number>,
        })),
    }));
    const last = newestTs(rows.hourly.map((h) => Number(h.hour_ts)));
    return {
      files: [{ path: mintBurnFlowsArtifact.outputs.main.path, payload: { coins }, rows: rows.hourly.length }],
      dataAsOf: last === null ? null : last + 3600,
    };
  },
};
