import { z } from "zod";
import { AMOUNT_SOURCES, AMOUNT_STATUSES } from "../pipelines/onchain/contract.ts";

// The published freeze event, declared apart from the ledger artifact (site-data/blacklist.ts) so that
// the artifact and its serving layout (site-data/blacklist-pages.ts) both import it without importing
// each other.

/**
 * BlacklistEvent (spec 2.5). Amounts: `amountNative` in token units (exact decimal of the base units,
 * then a JSON number), `amountRaw` the exact base units as a string (our addition), `amountUsdAtEvent`
 * USD by the supply valuation rule of the event's UTC day (USD pegs 1 × units); null when unknown,
 * never zero. `linkedFreezeEventId` and `frozenDurationSec` (s) link a destroy to the freeze that made
 * it possible.
 */
export const BlacklistEventSchema = z.object({
  id: z.string(),
  stablecoin: z.string(),
  stablecoinId: z.string(),
  chainId: z.string(),
  chainName: z.string(),
  eventType: z.enum(["blacklist", "unblacklist", "destroy"]),
  address: z.string(),
  amountNative: z.number().nullable(),
  amountRaw: z.string().nullable(),
  /** Token decimals of the contract (amountRaw / 10^decimals = amountNative). */
  decimals: z.number().int(),
  amountUsdAtEvent: z.number().nullable(),
  amountSource: z.enum(AMOUNT_SOURCES),
  amountStatus: z.enum(AMOUNT_STATUSES),
  txHash: z.string(),
  blockNumber: z.number().int(),
  logIndex: z.number().int(),
  timestamp: z.number().int(),
  methodologyVersion: z.string(),
  contractAddress: z.string().nullable(),
  configKey: z.string().nullable(),
  eventSignature: z.string().nullable(),
  eventTopic0: z.string().nullable(),
  suppressionReason: z.null(),
  explorerTxUrl: z.string().nullable(),
  explorerAddressUrl: z.string().nullable(),
  linkedFreezeEventId: z.string().nullable(),
  frozenDurationSec: z.number().int().nullable(),
  /** `recorded`: from a recorded log archive; `live`: from the ingestion ledger. */
  origin: z.enum(["recorded", "live"]),
});
export type BlacklistEvent = z.infer<typeof BlacklistEventSchema>;
