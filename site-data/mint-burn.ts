import { z } from "zod";
import { decimalString } from "../pipelines/onchain/contract.ts";
import { explorerUrls } from "../pipelines/onchain/explorers.ts";
import { type Artifact, num } from "./contract.ts";

export { MINT_BURN_METHODOLOGY, MINT_BURN_METHODOLOGY_LABEL } from "../pipelines/onchain/methodology.ts";

export const FLOW_TYPES = ["standard", "bridge_transfer", "atomic_roundtrip", "fast_roundtrip", "frozen_funds"] as const;
export const BURN_TYPES = ["redemption", "bridge", "roundtrip", "frozen_funds"] as const;
export const FLOW_SCOPES = ["issuance", "bridge", "roundtrip", "enforcement"] as const;

/**
 * One mint or burn (`/api/mint-burn-events`). `flowType` classifies it (only `standard` enters flows);
 * `scope` groups flow types (`issuance` = standard); `burnType` is null for mints. Amounts: token units
 * (`amountNative`), exact base units (`amountRaw`), USD at the event day's price (`amountUsd`, null when
 * unpriced, never zero). Times Unix s.
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
  amountUsd: z.number().nullable(),
  priceUsd: z.number().nullable(),
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
export const MintBurnLedgerSchema = z.object({ events: z.array(MintBurnEventSchema), stablecoinIds: z.array(z.string()) });
export type MintBurnLedger = z.infer<typeof MintBurnLedgerSchema>;

const newestTs = (ts: number[]) => (ts.length ? Math.max(...ts) : null);

/** Mint/burn ledger for `/api/mint-burn-events` (filters and keyset cursors in api/queries/mint-burn.ts). */
export const mintBurnLedgerArtifact: Artifact = {
  key: "mint-burn",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  schema: MintBurnLedgerSchema,
  outputs: { main: { path: "site-data/mint-burn-events.json", schema: MintBurnLedgerSchema } },
  description: "Mint/burn events of tracked supply contracts, classified, newest first.",
  queries: {
    events: "select * from mint_burn_events order by ts desc, id desc",
    coins: "select id from registry_coins order by id",
  },
  assemble(rows) {
    const events: MintBurnEvent[] = rows.events.map((r: Record<string, any>) => {
      const raw = r.amount_raw === null || r.amount_raw === undefined ? null : String(r.amount_raw);
      return {
        id: r.id, stablecoin: r.symbol, stablecoinId: r.stablecoin_id, chainId: r.chain_id, direction: r.direction, flowType: r.flow_type,
        burnType: r.burn_type ?? null, scope: r.scope, address: r.address, amountNative: raw === null ? null : Number(decimalString(raw, Number(r.decimals))),
        amountRaw: raw, decimals: Number(r.decimals), amountUsd: num(r.amount_usd_at_event), priceUsd: num(r.price_usd_at_event), txHash: r.tx_hash,
        txFrom: r.tx_from ?? null, blockNumber: Number(r.block_number), logIndex: Number(r.log_index), timestamp: Number(r.ts),
        contractAddress: r.contract_address, configKey: r.config_key, eventSignature: r.event_signature, roundtripPairId: r.roundtrip_pair_id ?? null,
        explorerTxUrl: explorerUrls(r.chain_id, r.tx_hash, r.address).explorerTxUrl, methodologyVersion: r.methodology_version, origin: r.origin,
      };
    });
    const payload: MintBurnLedger = { events, stablecoinIds: rows.coins.map((r) => String(r.id)) };
    return { files: [{ path: mintBurnLedgerArtifact.outputs.main.path, payload, rows: events.length }], dataAsOf: newestTs(events.map((e) => e.timestamp)) };
  },
};

/** One hour of standard flows of a coin (USD sums over priced events; unpriced ones counted). */
export const FlowHourSchema = z.object({
  hourTs: z.number().int(),
  mintedUsd: z.number().nullable(), burnedUsd: z.number().nullable(),
  mintedNative: z.number(), burnedNative: z.number(),
  mintCount: z.number().int(), burnCount: z.number().int(),
  unpricedMintCount: z.number().int(), unpricedBurnCount: z.number().int(),
});
export type FlowHour = z.infer<typeof FlowHourSchema>;

/** `site-data/mint-burn-flows.json`: per coin with tracked supply contracts, its hourly standard flows (hours with activity, ascending). */
export const MintBurnHourlySchema = z.object({
  coins: z.array(z.object({
    stablecoinId: z.string(), symbol: z.string(),
    excludedEventCounts: z.record(z.string(), z.number().int()),
    hourly: z.array(FlowHourSchema),
  })),
});
export type MintBurnHourly = z.infer<typeof MintBurnHourlySchema>;

/** Hourly flows the `/api/mint-burn-flows` windows are computed from (api/queries/mint-burn.ts). */
export const mintBurnFlowsArtifact: Artifact = {
  key: "mint-burn-flows",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  schema: MintBurnHourlySchema,
  outputs: { main: { path: "site-data/mint-burn-flows.json", schema: MintBurnHourlySchema } },
  description: "Hourly standard mint/burn flows per coin.",
  queries: {
    coins: `select distinct t.stablecoin_id, upper(c.symbol) as symbol from registry_tracked_contracts t
      join registry_coins c on c.id = t.stablecoin_id where t.purpose = 'supply' order by t.stablecoin_id`,
    hourly: "select * from mint_burn_hourly order by stablecoin_id, hour_ts",
    excluded: "select stablecoin_id, flow_type, count(*)::integer as n from mint_burn_events where flow_type <> 'standard' group by all order by all",
  },
  assemble(rows) {
    const coins = rows.coins.map((c) => ({
      stablecoinId: String(c.stablecoin_id), symbol: String(c.symbol),
      excludedEventCounts: Object.fromEntries(rows.excluded.filter((x) => x.stablecoin_id === c.stablecoin_id).map((x) => [String(x.flow_type), Number(x.n)])),
      hourly: rows.hourly.filter((h) => h.stablecoin_id === c.stablecoin_id).map((h) => ({
        hourTs: Number(h.hour_ts), mintedUsd: num(h.minted_usd), burnedUsd: num(h.burned_usd), mintedNative: Number(h.minted_native), burnedNative: Number(h.burned_native),
        mintCount: Number(h.mint_count), burnCount: Number(h.burn_count), unpricedMintCount: Number(h.unpriced_mint_count), unpricedBurnCount: Number(h.unpriced_burn_count),
      })),
    }));
    const last = newestTs(rows.hourly.map((h) => Number(h.hour_ts)));
    return { files: [{ path: mintBurnFlowsArtifact.outputs.main.path, payload: { coins }, rows: rows.hourly.length }], dataAsOf: last === null ? null : last + 3600 };
  },
};
