import { z } from "zod";
import { sqlArtifact } from "./contract.ts";

/** How a receipt counts towards a donor key (site-data/donations_ledger.sql): only `counted` receipts can, and only in a coin graded A+ to B- at claim time. */
export const RECEIPT_CLASSIFICATIONS = [
  "counted",
  "pool",
  "stream",
  "exchange",
  "unreviewed-contract",
  "unvalued",
] as const;

/**
 * `site-data/donations-ledger.json`: the donations ledger a build publishes (spec 5.3). Times Unix s;
 * `amount` in token units (decimal string as reconciled); `usdPerUnit` USD per token at the receipt
 * date (1 for USD-pegged coins; the ECB reference rate of `fxDate` for another peg); `usdAtReceipt`
 * USD. `from` is lower-cased. `reconciledAt` is the cut-off least(the file's reconciliation day,
 * as-of): receipts received after it are not in it, so a build as of T uses nothing dated after T.
 */
export const DonationsLedgerSchema = z.object({
  reconciledAt: z.number().int(),
  asOf: z.number().int(),
  methodologyVersion: z.string(),
  thresholdUsd: z.number(),
  rejectedReceipts: z.number().int().min(0),
  qualifying: z.array(
    z.object({ stablecoinId: z.string(), symbol: z.string(), chain: z.string(), contract: z.string() }),
  ),
  receipts: z.array(
    z.object({
      txHash: z.string().regex(/^0x[0-9a-f]{64}$/),
      logIndex: z.number().int().min(0),
      chain: z.string(),
      token: z.string(),
      from: z.string().regex(/^0x[0-9a-f]{40}$/),
      stablecoinId: z.string().nullable(),
      symbol: z.string().nullable(),
      amount: z.string(),
      receivedAt: z.number().int(),
      kind: z.string(),
      usdPerUnit: z.number().nullable(),
      fxDate: z.string().nullable(),
      usdAtReceipt: z.number().nullable(),
      classification: z.enum(RECEIPT_CLASSIFICATIONS),
    }),
  ),
});
export type DonationsLedgerPayload = z.infer<typeof DonationsLedgerSchema>;

/** The ledger donor key claims read from the serving build (api/lib/donor-claims.ts); no route serves it. */
export const donationsLedgerArtifact = sqlArtifact(import.meta.url, {
  key: "donations-ledger",
  schemaVersion: "1.0.0",
  maxAgeSec: 8 * 86400,
  description: "Donations received by as-of, valued at their receipt date and classified for donor key claims.",
  path: "site-data/donations-ledger.json",
  schema: DonationsLedgerSchema,
  sql: "donations_ledger",
  shape: "one",
  dataAsOf: (d: DonationsLedgerPayload) => d.reconciledAt,
});
