import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../build/duckdb.ts";
import type { DonationsLedgerPayload } from "../../site-data/donations-ledger.ts";
import { account, AS_OF, buildLedger, CONTRACTS, receipt, writeLedger } from "../helpers/donations.ts";

// The ledger a build publishes for donor claims (site-data/donations_ledger.sql): receipt-date
// valuation (USD pegs at face value, EUR at the ECB fixing of the receipt day or the last before),
// classification, as-of cut-off, rejected rows reported. Expected values are worked by hand.
const a = account(0).address;
const b = account(1).address;
let db: Db;
let ledger: DonationsLedgerPayload;
let warnings: string[];

beforeAll(async () => {
  ({ db, ledger, warnings } = await buildLedger(
    writeLedger([
      receipt(a.toUpperCase().replace("0X", "0x"), CONTRACTS.aaa, "10", "2025-09-06T10:00:00+02:00"), // upper-case hex; 08:00Z
      receipt(a, CONTRACTS.eee, "9.5", "2025-09-07T12:00:00Z"), // Sunday: the Friday fixing 1.1
      receipt(a, CONTRACTS.eee, "2", "2025-09-08T09:00:00Z"), // Monday's fixing 1.2
      receipt(b, CONTRACTS.aaa, "100", "2025-09-06T00:00:00Z", "pool"),
      receipt(b, CONTRACTS.aaa, "3", "2025-09-06T00:00:00Z", "founder"),
      receipt(b, CONTRACTS.unreviewed, "50", "2025-09-06T00:00:00Z"),
      receipt(b, CONTRACTS.eee, "4", "2025-09-01T00:00:00Z"), // before any fixing: unvalued
      receipt(b, CONTRACTS.aaa, "70", "2025-09-10T00:00:01Z"), // after as-of: not in the ledger
    ]),
  ));
});
afterAll(() => db?.close());

describe("donations ledger (site-data/donations-ledger.json)", () => {
  it("values each receipt at its receipt date and lower-cases the sender", () => {
    const mine = ledger.receipts
      .filter((r) => r.from === a.toLowerCase())
      .map((r) => [r.symbol, r.amount, r.usdPerUnit, r.fxDate, r.usdAtReceipt, r.classification, r.receivedAt]);
    expect(mine).toEqual([
      ["AAA", "10", 1, null, 10, "counted", Date.parse("2025-09-06T08:00:00Z") / 1000],
      ["EEE", "9.5", 1.1, "2025-09-05", 10.45, "counted", Date.parse("2025-09-07T12:00:00Z") / 1000],
      ["EEE", "2", 1.2, "2025-09-08", 2.4, "counted", Date.parse("2025-09-08T09:00:00Z") / 1000],
    ]);
  });

  it("classifies pool payouts, unreviewed tokens and unvalued receipts, and counts founder rows", () => {
    const theirs = ledger.receipts
      .filter((r) => r.from === b.toLowerCase())
      .map((r) => [r.amount, r.kind, r.classification, r.usdAtReceipt]);
    expect(theirs).toEqual([
      ["4", "donation", "unvalued", null],
      ["100", "pool", "pool", 100],
      ["3", "founder", "counted", 3],
      ["50", "donation", "unreviewed-contract", null],
    ]);
  });

  it("keeps nothing received after as-of, and reports the malformed receipt", () => {
    expect(ledger.asOf).toBe(AS_OF);
    expect(ledger.receipts.some((r) => r.amount === "70")).toBe(false);
    expect(ledger.rejectedReceipts).toBe(1);
    expect(warnings.filter((w) => w.startsWith("donations ledger"))).toEqual([
      expect.stringMatching(/1 receipt rejected \(from: expected a 0x-prefixed 20-byte hex address\)$/),
    ]);
    expect(ledger.reconciledAt).toBe(AS_OF); // the file's reconciliation day (2025-09-10) and as-of coincide
    expect(ledger.qualifying.map((q) => `${q.symbol}:${q.chain}:${q.contract}`)).toEqual([
      `AAA:ethereum:${CONTRACTS.aaa}`,
      `CCC:ethereum:${CONTRACTS.ccc}`,
      `EEE:ethereum:${CONTRACTS.eee}`,
      `NNN:ethereum:${CONTRACTS.nnn}`,
    ]);
  });

  it("a ledger reconciled before as-of stops at its reconciliation: a later receipt waits for the next one", async () => {
    const path = writeLedger([
      receipt(a, CONTRACTS.aaa, "1", "2025-09-07T23:59:59Z"),
      receipt(a, CONTRACTS.aaa, "2", "2025-09-08T00:00:01Z"),
    ]);
    const { readFileSync, writeFileSync } = await import("node:fs");
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, "utf8")), reconciledAt: "2025-09-08" }));
    const early = await buildLedger(path);
    early.db.close();
    expect(early.ledger.reconciledAt).toBe(Date.parse("2025-09-08T00:00:00Z") / 1000);
    expect(early.ledger.receipts.map((r) => r.amount)).toEqual(["1"]);
  });
});
