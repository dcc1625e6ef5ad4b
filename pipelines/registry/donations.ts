import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { Registry } from "./schema.ts";

/**
 * The donations ledger: what Ballast's donation addresses received, reconciled weekly (Sundays) from
 * the chains into `pipelines/registry/donations.json` (or the file `BALLAST_DONATIONS_LEDGER` names),
 * plus the reviewed (stablecoin, chain) pairs whose registry contract counts. The build loads it into
 * `registry_donation_*` tables and publishes `site-data/donations-ledger.json` (receipts valued at
 * their receipt date); donor key claims (spec 5.3) read that file. Curated data, like the registry.
 */

/** Default ledger file (committed; ships no receipts). */
export const DONATIONS_PATH = join(dirname(fileURLToPath(import.meta.url)), "donations.json");

/**
 * Kinds of receipt: `donation` (a wallet's own transfer), `founder` (the founders' own donations,
 * which count), `pool` (a payout from a funding pool or matching round: never counts), `stream` (a
 * payment stream) and `exchange` (a withdrawal from an exchange's hot wallet): neither proves the
 * sender controls the address, so neither counts.
 */
export const RECEIPT_KINDS = ["donation", "founder", "pool", "stream", "exchange"] as const;

const Address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte hex address")
  .transform((a) => a.toLowerCase());
const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "expected YYYY-MM-DD");

/** One received transfer. `amount` is in token units (decimal string, as reconciled); `receivedAt` an ISO time with its zone. */
export const DonationReceiptSchema = z.object({
  txHash: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex hash")
    .transform((h) => h.toLowerCase()),
  logIndex: z.number().int().min(0),
  chain: z.string().min(1),
  token: Address,
  from: Address,
  amount: z.string().regex(/^\d+(\.\d+)?$/, "expected a non-negative decimal string"),
  receivedAt: z.iso.datetime({ offset: true }),
  kind: z.enum(RECEIPT_KINDS),
});
export type DonationReceipt = z.infer<typeof DonationReceiptSchema>;

const LedgerFileSchema = z.object({
  /** Day of the last weekly reconciliation (UTC). */
  reconciledAt: Day,
  note: z.string().optional(),
  qualifying: z.array(z.object({ stablecoinId: z.string().min(1), chains: z.array(z.string().min(1)).min(1) })),
  receipts: z.array(z.unknown()),
});

/** A loaded ledger: valid receipts, the reviewed pairs resolved to registry contracts, and what was rejected. */
export interface DonationsLedger {
  /** Unix s of 00:00 UTC of the reconciliation day. */
  reconciledAt: number;
  receipts: DonationReceipt[];
  /** Reviewed pairs: the registry contract of `stablecoinId` on `chain` (lower-cased). */
  qualifying: { stablecoinId: string; chain: string; contract: string }[];
  /**
   * Reviewed pairs `<stablecoinId> on <chain>` the registry has no contract for (none count). A test
   * registry lacks the curated coins; test/unit/registry.test.ts checks the committed files agree.
   */
  unresolved: string[];
  /** Receipts that failed their schema, by reason (`<field>: <message>`); reported in the build manifest. */
  rejected: Record<string, number>;
  path: string;
}

/**
 * Reads and validates the ledger at `path` (default `BALLAST_DONATIONS_LEDGER`, else the committed
 * file) against `registry`: each reviewed (stablecoin, chain) pair must name a registry coin with a
 * contract on that chain (else it is listed in `unresolved` and counts nothing); a malformed receipt is
 * dropped and counted under `rejected`; a repeated (txHash, logIndex) is dropped as `duplicate`.
 * @throws Error naming the file and problem when the file is unreadable or not the ledger's shape.
 */
export function loadDonations(
  registry: Registry,
  path = process.env.BALLAST_DONATIONS_LEDGER || DONATIONS_PATH,
): DonationsLedger {
  let file: z.infer<typeof LedgerFileSchema>;
  try {
    file = LedgerFileSchema.parse(JSON.parse(readFileSync(path, "utf8")));
  } catch (err) {
    throw new Error(
      `donations ledger ${path}: ${err instanceof z.ZodError ? z.prettifyError(err) : (err as Error).message}`,
    );
  }
  const coins = new Map(registry.coins.map((c) => [c.id, c]));
  const unresolved: string[] = [];
  const qualifying = file.qualifying.flatMap(({ stablecoinId, chains }) =>
    chains.flatMap((chain) => {
      const contract = coins.get(stablecoinId)?.contracts.find((c) => c.chain === chain)?.address;
      if (!contract) {
        unresolved.push(`${stablecoinId} on ${chain}`);
        return [];
      }
      return [{ stablecoinId, chain, contract: contract.toLowerCase() }];
    }),
  );
  const rejected: Record<string, number> = {};
  const seen = new Set<string>();
  const receipts: DonationReceipt[] = [];
  const reject = (reason: string) => {
    rejected[reason] = (rejected[reason] ?? 0) + 1;
  };
  for (const raw of file.receipts) {
    const r = DonationReceiptSchema.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0];
      reject(`${issue.path.join(".") || "(row)"}: ${issue.message}`);
      continue;
    }
    const key = `${r.data.txHash}:${r.data.logIndex}`;
    if (seen.has(key)) {
      reject("duplicate");
      continue;
    }
    seen.add(key);
    receipts.push(r.data);
  }
  return {
    reconciledAt: Date.parse(`${file.reconciledAt}T00:00:00Z`) / 1000,
    receipts,
    qualifying,
    unresolved,
    rejected,
    path,
  };
}
