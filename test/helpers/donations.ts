import { mkdtempSync, writeFileSync } from "node:fs";
import { recordedCapture } from "./capture.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HDAccount, mnemonicToAccount } from "viem/accounts";
import type { Db } from "../../build/duckdb.ts";
import { loadAndModel } from "../../build/stages/model.ts";
import type { Coin, Registry } from "../../pipelines/registry/schema.ts";
import {
  type DonationsLedgerPayload,
  DonationsLedgerSchema,
  donationsLedgerArtifact,
} from "../../site-data/donations-ledger.ts";
import { registryCoin } from "./registry-coin.ts";

/**
 * A test donations ledger over a small registry, built by the real load stage and the ledger's SQL
 * (site-data/donations_ledger.sql), for accounts of anvil's default mnemonic. Coins: AAA (USD peg,
 * graded A), EEE (EUR peg, A-), CCC (USD, C+), NNN (USD, no grade). ECB EUR/USD: 1.1 fixed on
 * 2025-09-05 (a Friday), 1.2 on 2025-09-08.
 */

/** Anvil's default mnemonic: its funded accounts are HD indexes 0-9. */
export const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";
export const account = (i: number): HDAccount => mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: i });

export const AS_OF = Date.parse("2025-09-10T00:00:00Z") / 1000;
export const EUR_USD = 1.1;
export const CONTRACTS = {
  aaa: "0x00000000000000000000000000000000000000a1",
  eee: "0x00000000000000000000000000000000000000e1",
  ccc: "0x00000000000000000000000000000000000000c1",
  nnn: "0x00000000000000000000000000000000000000b1",
  unreviewed: "0x00000000000000000000000000000000000000f1",
} as const;

const coin = (id: string, llamaId: string, pegType: string, pegCurrency: string, contract: string): Coin =>
  registryCoin(id, llamaId, pegType, pegCurrency, {
    contracts: [{ chain: "ethereum", address: contract, decimals: 6 }],
  });

export const REGISTRY: Registry = {
  eventFamilies: {},
  bridges: [],
  chains: [{ id: "ethereum", name: "Ethereum" }],
  coins: [
    coin("aaa-one", "1", "peggedUSD", "USD", CONTRACTS.aaa),
    coin("eee-euro", "2", "peggedEUR", "EUR", CONTRACTS.eee),
    coin("ccc-low", "3", "peggedUSD", "USD", CONTRACTS.ccc),
    coin("nnn-new", "4", "peggedUSD", "USD", CONTRACTS.nnn),
  ],
};

let n = 0;
/** One receipt (a fresh tx hash each) of `amount` token units of `token` from `from` at ISO time `at`. */
export function receipt(from: string, token: string, amount: string, at: string, kind = "donation") {
  return {
    txHash: `0x${(++n).toString(16).padStart(64, "0")}`,
    logIndex: 0,
    chain: "ethereum",
    token,
    from,
    amount,
    receivedAt: at,
    kind,
  };
}

/**
 * The test ledger file: reviewed pairs AAA, EEE, CCC, NNN on ethereum (the unreviewed token is not),
 * `receipts` as given plus one malformed receipt (a bad address) that the build rejects and counts.
 */
export function writeLedger(receipts: unknown[]): string {
  const path = join(mkdtempSync(join(tmpdir(), "ballast-donations-")), "donations.json");
  writeFileSync(
    path,
    JSON.stringify({
      reconciledAt: "2025-09-10",
      qualifying: ["aaa-one", "eee-euro", "ccc-low", "nnn-new"].map((stablecoinId) => ({
        stablecoinId,
        chains: ["ethereum"],
      })),
      receipts: [...receipts, { ...receipt("0xnot-an-address", CONTRACTS.aaa, "1", "2025-09-01T00:00:00Z") }],
    }),
  );
  return path;
}

const cap = (endpoint: string, payload: unknown) => recordedCapture(endpoint, payload, AS_OF);

/**
 * Runs the load and model stages as of `AS_OF` over REGISTRY with the ledger at `ledgerPath`, and
 * returns the database, the manifest warnings and the published ledger payload (schema-checked).
 */
export async function buildLedger(
  ledgerPath: string,
): Promise<{ db: Db; warnings: string[]; ledger: DonationsLedgerPayload }> {
  process.env.BALLAST_LOG = "silent";
  const before = process.env.BALLAST_DONATIONS_LEDGER;
  process.env.BALLAST_DONATIONS_LEDGER = ledgerPath;
  try {
    const { db, warnings } = await loadAndModel({
      asOf: AS_OF,
      registry: REGISTRY,
      captures: [
        cap("defillama.stablecoins", {
          peggedAssets: REGISTRY.coins.map((c) => ({
            id: c.llamaId,
            name: c.symbol,
            symbol: c.symbol,
            pegType: c.pegType,
            pegMechanism: "fiat-backed",
            price: null,
            chainCirculating: {},
            circulating: { [c.pegType]: 100 },
            circulatingPrevDay: { [c.pegType]: 100 },
            circulatingPrevWeek: { [c.pegType]: 100 },
            circulatingPrevMonth: { [c.pegType]: 100 },
          })),
        }),
        cap("frankfurter.rates", {
          base: "EUR",
          rates: { "2025-09-05": { USD: EUR_USD }, "2025-09-08": { USD: 1.2 } },
        }),
      ],
    });
    const rows = { main: await db.all(donationsLedgerArtifact.queries.main) };
    const file = donationsLedgerArtifact.assemble(rows, { asOf: AS_OF, sourceObservedAt: {} }).files[0];
    return { db, warnings, ledger: DonationsLedgerSchema.parse(JSON.parse(JSON.stringify(file.payload))) };
  } finally {
    if (before === undefined) delete process.env.BALLAST_DONATIONS_LEDGER;
    else process.env.BALLAST_DONATIONS_LEDGER = before;
  }
}

/** A safety-grades payload (site-data/safety-grades.json) grading the given coin ids; `held` holds the whole publication. */
export function gradesPayload(grades: Record<string, string>, held = false) {
  const methodology = {
    version: "v",
    versionLabel: "v",
    currentVersion: "v",
    currentVersionLabel: "v",
    changelogPath: "/methodology/safety-score.md",
    asOf: AS_OF,
    isCurrent: true,
  };
  return {
    grades: Object.entries(grades).map(([id, grade]) => ({
      id,
      symbol: id.split("-")[0].toUpperCase(),
      name: id,
      grade,
      score: 80,
      coverageClass: "full",
      missingInputs: [],
      methodologyVersion: "v",
      publicationStatus: "published",
    })),
    methodology,
    publication: { status: held ? "held" : "published", reason: held ? "prices older than 48 h" : null, asOf: AS_OF },
    updatedAt: AS_OF,
  };
}
