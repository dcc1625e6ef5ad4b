import { z } from "zod";
import { explorerUrls } from "../pipelines/onchain/explorers.ts";
import { sqlArtifact } from "./contract.ts";

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

/** `site-data/mint-burn-events.json`: every mint/burn, newest first (`timestamp` desc, `id` desc), and the coin ids the route accepts. */
export const MintBurnLedgerSchema = z.object({
  events: z.array(MintBurnEventSchema),
  stablecoinIds: z.array(z.string()),
});
export type MintBurnLedger = z.infer<typeof MintBurnLedgerSchema>;

/** Mint/burn ledger for `/api/mint-burn-events` (filters and keyset cursors in api/queries/mint-burn.ts). */
export const mintBurnLedgerArtifact = sqlArtifact(import.meta.url, {
  key: "mint-burn",
  schemaVersion: "1.1.0",
  maxAgeSec: 900,
  description: "Mint/burn events of tracked supply contracts, classified, newest first.",
  path: "site-data/mint-burn-events.json",
  schema: MintBurnLedgerSchema,
  sql: "mint_burn_ledger",
  shape: "one",
  // explorer links come from the explorer table (pipelines/onchain/explorers.ts)
  transform: (ledger: MintBurnLedger): MintBurnLedger => ({
    ...ledger,
    events: ledger.events.map((e) => ({
      ...e,
      explorerTxUrl: explorerUrls(e.chainId, e.txHash, e.address).explorerTxUrl,
    })),
  }),
  rows: (ledger: MintBurnLedger) => ledger.events.length,
  // newest first: the first event is the newest
  dataAsOf: (ledger: MintBurnLedger) => ledger.events[0]?.timestamp ?? null,
});

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

/** A row of mint_burn_flows.sql: the payload with the mart's row count and its newest hour (Unix s; null when none). */
type FlowsRow = MintBurnHourly & { hourly_rows: number; newest_hour_ts: number | null };

/** Hourly flows the `/api/mint-burn-flows` windows are computed from (api/queries/mint-burn.ts). */
export const mintBurnFlowsArtifact = sqlArtifact(import.meta.url, {
  key: "mint-burn-flows",
  schemaVersion: "2.0.0",
  maxAgeSec: 900,
  description: "Hourly standard mint/burn flows per coin, with each hour's excluded events counted per flow type.",
  path: "site-data/mint-burn-flows.json",
  schema: MintBurnHourlySchema,
  sql: "mint_burn_flows",
  shape: "one",
  transform: ({ coins }: FlowsRow): MintBurnHourly => ({ coins }),
  rows: (_flows, row: FlowsRow) => row.hourly_rows,
  // the end of the newest hour
  dataAsOf: (_flows, _ctx, row: FlowsRow) => (row.newest_hour_ts === null ? null : row.newest_hour_ts + 3600),
});
