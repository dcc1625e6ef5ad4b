import { z } from "zod";
import { explorerUrls } from "../pipelines/onchain/explorers.ts";
import { ledgerAmount } from "./ledger-amount.ts";
import { decimalString } from "../pipelines/onchain/contract.ts";
import { FREEZE_METHODOLOGY, FREEZE_METHODOLOGY_LABEL } from "../pipelines/onchain/methodology.ts";
import { type BlacklistEvent, BlacklistEventSchema } from "./blacklist-event.ts";
import { BLACKLIST_PAGES, encodeBlacklistPages } from "./blacklist-pages.ts";
import { num, sqlArtifact } from "./contract.ts";
import { methodology, MethodologySchema } from "./peg-summary.ts";

export { FREEZE_METHODOLOGY, FREEZE_METHODOLOGY_LABEL } from "../pipelines/onchain/methodology.ts";
export { type BlacklistEvent, BlacklistEventSchema } from "./blacklist-event.ts";

/** Spec 4.1: recent windows of the summary (s). */
const DAY = 86400;
/** Gold-backed coins counted in `goldBlacklisted`. */
const GOLD = new Set(["PAXG", "XAUT"]);

/** `site-data/blacklist-events.json`: the whole freeze ledger, newest first (`timestamp` desc, `id` desc), and the registry chains (for `chain`/`chainId`). */
export const BlacklistLedgerSchema = z.object({
  events: z.array(BlacklistEventSchema),
  chains: z.array(z.object({ id: z.string(), name: z.string() })),
});
export type BlacklistLedger = z.infer<typeof BlacklistLedgerSchema>;

const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** A `blacklist_events` mart row as DuckDB's JSON rows carry it: BIGINT/HUGEINT columns may be strings. */
type BlacklistEventRow = {
  id: string;
  stablecoin_id: string;
  symbol: string;
  chain_id: string;
  chain_name: string;
  event_type: BlacklistEvent["eventType"];
  address: string;
  amount_raw: string | number | null;
  decimals: number | string;
  amount_usd_at_event: number | null;
  amount_source: BlacklistEvent["amountSource"];
  amount_status: BlacklistEvent["amountStatus"];
  tx_hash: string;
  block_number: number | string;
  log_index: number | string;
  ts: number | string;
  methodology_version: string;
  contract_address: string | null;
  config_key: string | null;
  event_signature: string | null;
  topic0: string | null;
  linked_freeze_event_id: string | null;
  frozen_duration_sec: number | string | null;
  origin: BlacklistEvent["origin"];
};

/** A tracked freeze contract (a `registry_tracked_contracts` row of purpose `freeze`). */
export type FreezeCoverageRow = {
  config_key: string;
  stablecoin_id: string;
  symbol: string;
  chain_id: string;
  contract_address: string | null;
  family: string;
  decimals: number | string | null;
  start_block: number | string | null;
  unsupported_reason: string | null;
};

/** A registry chain. */
type ChainRow = { id: string; name: string };

/** The row of blacklist_summary.sql (blacklist_ledger.sql: without `coverage`): whole mart rows newest first, freeze configs, chains. */
type FreezeRow = { events: BlacklistEventRow[]; coverage: FreezeCoverageRow[]; chains: ChainRow[] };

/** One `blacklist_events` mart row → BlacklistEvent. */
function toEvent(r: BlacklistEventRow): BlacklistEvent {
  return {
    id: r.id,
    stablecoin: r.symbol,
    stablecoinId: r.stablecoin_id,
    chainId: r.chain_id,
    chainName: r.chain_name,
    eventType: r.event_type,
    address: r.address,
    ...ledgerAmount(r),
    amountUsdAtEvent: num(r.amount_usd_at_event),
    amountSource: r.amount_source,
    amountStatus: r.amount_status,
    txHash: r.tx_hash,
    blockNumber: Number(r.block_number),
    logIndex: Number(r.log_index),
    timestamp: Number(r.ts),
    methodologyVersion: r.methodology_version,
    contractAddress: r.contract_address ?? null,
    configKey: r.config_key ?? null,
    eventSignature: r.event_signature ?? null,
    eventTopic0: r.topic0 ?? null,
    suppressionReason: null,
    ...explorerUrls(r.chain_id, r.tx_hash, r.address),
    linkedFreezeEventId: r.linked_freeze_event_id ?? null,
    frozenDurationSec: n(r.frozen_duration_sec),
    origin: r.origin,
  };
}

/** Newest block time among the ledger rows (Unix s): the data time of the freeze artifacts. */
const newestTs = (events: { timestamp: number }[]) =>
  events.length ? Math.max(...events.map((e) => e.timestamp)) : null;

/**
 * The freeze ledger `/api/blacklist` pages (filters, four sort keys, keyset cursors: api/queries/blacklist.ts):
 * the JSON ledger (read by the alert dispatcher, and by the route for builds published before the
 * serving layout) and its serving layout (site-data/blacklist-pages.ts), which the route pages from.
 */
export const blacklistLedgerArtifact = sqlArtifact(import.meta.url, {
  key: "blacklist",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  description: "Freeze/blacklist events of tracked contracts, newest first.",
  path: "site-data/blacklist-events.json",
  schema: BlacklistLedgerSchema,
  sql: "blacklist_ledger",
  shape: "one",
  // exact amounts and explorer links (toEvent)
  transform: ({ events, chains }: Omit<FreezeRow, "coverage">): BlacklistLedger => ({
    events: events.map(toEvent),
    chains,
  }),
  rows: (ledger: BlacklistLedger) => ledger.events.length,
  // the serving layout of the same rows: what /api/blacklist pages from
  layout: (ledger: BlacklistLedger) => {
    const pages = encodeBlacklistPages(ledger.events, ledger.chains);
    return (Object.keys(BLACKLIST_PAGES) as (keyof typeof BLACKLIST_PAGES)[]).map((k) => ({
      path: BLACKLIST_PAGES[k],
      body: pages[k],
    }));
  },
  dataAsOf: (ledger: BlacklistLedger) => newestTs(ledger.events),
});

const Quarterly = z.object({
  quarter: z.string(),
  blacklist: z.number().int(),
  unblacklist: z.number().int(),
  destroy: z.number().int(),
});
const Distribution = z.record(z.string(), z.number().int());

const usd = (what: string) =>
  z
    .number()
    .nullable()
    .describe(
      `USD: ${what}; null when any term is unknown (never zero or a partial sum), the count of unknown terms beside it`,
    );
const usdPerCoin = (what: string) =>
  z
    .record(z.string(), z.number().nullable())
    .describe(
      `Per coin symbol, USD: ${what}; null for a coin with an unknown term (its count in the matching *GapCount map)`,
    );
const gapCount = (what: string) =>
  z
    .number()
    .int()
    .describe(`Count of ${what} whose amount (or its USD value) is unknown: the unknown terms of the total beside it`);
const gapPerCoin = (what: string) =>
  Distribution.describe(`Per coin symbol: count of ${what} whose amount (or its USD value) is unknown`);

/**
 * `/api/blacklist-summary` (spec 2.5). Units: every spec `*Total` field (`destroyedTotal`,
 * `activeFrozenTotal`, `trackedFrozenTotal`, `perCoinFrozenTotal`, `perCoinDestroyedTotal`) is USD,
 * each event valued by the supply valuation rule of its UTC day (USD pegs 1 × units); token-unit
 * companions end in `Native` (numbers) or `Exact` (exact decimal strings). A total over terms some
 * of which are unknown is null, never zero or a partial sum, with the count of unknown terms beside it
 * (`*GapCount`). Frozen amounts are the balances at the freeze event.
 */
export const BlacklistSummarySchema = z.object({
  stats: z.object({
    usdcBlacklisted: z
      .number()
      .int()
      .describe("USDC addresses with an active freeze record: blacklisted, neither unblacklisted nor destroyed"),
    usdtBlacklisted: z
      .number()
      .int()
      .describe(
        "USDT addresses with an active freeze record: blacklisted, neither unblacklisted nor destroyed (a destroy empties the address, so it leaves this count; see usdtAddressesOnBlacklist)",
      ),
    usdtAddressesOnBlacklist: z
      .number()
      .int()
      .describe(
        "USDT addresses still on the on-chain blacklist at as-of: blacklisted and not unblacklisted, destroyed or not (a destroy burns the balance but does not remove the address from the list)",
      ),
    goldBlacklisted: z
      .number()
      .int()
      .describe("Gold-token (PAXG, XAUT) addresses with an active freeze record, as usdcBlacklisted"),
    frozenAddresses: z.number().int(),
    destroyedTotal: usd("sum of every destroy's amount at its event day"),
    destroyedAmountGapCount: gapCount("destroys"),
    activeAddressCount: z.number().int(),
    activeFrozenTotal: usd("sum of the active (frozen, not destroyed, not unfrozen) records' balances at their freeze"),
    activeAmountGapCount: gapCount("active records"),
    trackedAddressCount: z.number().int(),
    trackedFrozenTotal: usd(
      "sum of the active records' last-known current-balance snapshots (none are read yet: null while any record is active)",
    ),
    trackedAmountGapCount: z
      .number()
      .int()
      .describe("Count of active records without a current-balance snapshot: the unknown terms of trackedFrozenTotal"),
    recentCount: z.number().int(),
    recentCount24h: z.number().int(),
    recoverableGapCount: z.number().int(),
    perCoinBlacklistCounts: Distribution,
    perCoinTotalEvents: Distribution,
    perCoinFrozenAddressCount: Distribution,
    perCoinFrozenTotal: usdPerCoin("the coin's active records' balances at their freeze"),
    perCoinFrozenTotalNative: z
      .record(z.string(), z.number().nullable())
      .describe(
        "Per coin symbol, token units: the coin's active records' balances at their freeze; null with an unknown amount",
      ),
    perCoinFrozenAmountGapCount: gapPerCoin("the coin's active records"),
    perCoinDestroyedTotal: usdPerCoin("the coin's destroyed amounts at their event days"),
    perCoinDestroyedTotalNative: z
      .record(z.string(), z.number().nullable())
      .describe(
        "Per coin symbol, token units: the coin's destroyed amounts (perCoinDestroyedTotalExact as a number); null with an unknown amount",
      ),
    perCoinDestroyedTotalExact: z
      .record(z.string(), z.string().nullable())
      .describe(
        "Per coin symbol, token units as an exact decimal string (sum of base units); null with an unknown amount",
      ),
    perCoinDestroyedAmountGapCount: gapPerCoin("the coin's destroys"),
    perCoinQuarterlyEventTypes: z.record(z.string(), z.array(Quarterly)),
    frozenThenDestroyed: z.object({
      count: z.number().int(),
      perCoinAmount: z
        .record(z.string(), z.string().nullable())
        .describe(
          "Per coin symbol, token units as an exact decimal string: destroys linked to their freeze; null with an unknown amount",
        ),
      perCoinAmountGapCount: Distribution.describe("Per coin symbol: linked destroys without an amount"),
      medianFrozenDurationSec: z.number().int().nullable(),
    }),
  }),
  chart: z.array(z.record(z.string(), z.union([z.string(), z.number()]))),
  chains: z.array(z.object({ id: z.string(), name: z.string() })),
  coverage: z.object({
    supported: z.array(
      z.object({
        symbol: z.string(),
        stablecoinId: z.string(),
        chainId: z.string(),
        chainName: z.string(),
        contractAddress: z.string(),
        configKey: z.string(),
        providerSource: z.string(),
        eventFamilies: z.array(z.string()),
        eventTypes: z.array(z.string()),
      }),
    ),
    unsupportedDeferred: z.array(z.object({ symbol: z.string(), chainId: z.string(), reason: z.string() })),
    counts: z.object({
      supportedConfigs: z.number().int(),
      unsupportedDeferredConfigs: z.number().int(),
      bySymbol: Distribution,
      byChain: Distribution,
      byProviderSource: Distribution,
    }),
  }),
  freezeLedgerMeta: z.object({
    totalRows: z.number().int(),
    scopedRows: z.number().int(),
    legacyRows: z.number().int(),
    oldestObservedAt: z.number().int().nullable(),
    newestObservedAt: z.number().int().nullable(),
    oldestAgeSec: z.number().int().nullable(),
    newestAgeSec: z.number().int().nullable(),
    statusDistribution: Distribution,
    sourceDistribution: Distribution,
    freshnessDistribution: Distribution,
    currentFreshnessDistribution: Distribution,
    providerFailedCount: z.number().int(),
    lastErrorClassDistribution: Distribution,
    sourceCategoryCounts: Distribution,
    gaps: z.object({
      amountGaps: z.number().int(),
      recoverable: z.number().int(),
      providerFailed: z.number().int(),
      permanentlyUnavailable: z.number().int(),
    }),
  }),
  dataQuality: z.object({
    status: z.enum(["ok", "degraded", "stale"]),
    warnings: z.array(z.string()),
    amountGaps: z.object({
      missing: z.number().int(),
      recentMissing: z.number().int(),
      recentWindowSec: z.number().int(),
      missingRatio: z.number(),
    }),
    freezeLedger: z.object({ rows: z.number().int(), newestAgeSec: z.number().int().nullable() }),
    coverage: z.object({ supportedConfigs: z.number().int(), configsWithEvents: z.number().int() }),
  }),
  reconciliation: z.object({
    status: z.enum(["ok", "mismatch"]),
    runId: z.string(),
    manifestId: z.string().nullable(),
    manifestSha256: z.string().nullable(),
    bookmarkRecorded: z.boolean(),
    expectedEventCount: z.number().int(),
    presentEventCount: z.number().int(),
    missingEventCount: z.number().int(),
    duplicateIdentityCount: z.number().int(),
    destroyedRawAmounts: z
      .record(z.string(), z.string().nullable())
      .describe(
        "Per coin symbol, base units: destroyed amounts; null with an unknown amount (counted in balanceReplayCounts.unresolved)",
      ),
    balanceReplayCounts: z.object({ replayed: z.number().int(), unresolved: z.number().int() }),
    unresolvedManifestGapCount: z.number().int(),
    tronSafeHead: z.boolean(),
    arbitrumSafeHead: z.boolean(),
    startedAt: z.number().int(),
    completedAt: z.number().int(),
  }),
  totalEvents: z.number().int(),
  methodology: MethodologySchema,
});
export type BlacklistSummary = z.infer<typeof BlacklistSummarySchema>;

const quarterOf = (ts: number) => {
  const d = new Date(ts * 1000);
  return `${d.getUTCFullYear()}-Q${Math.floor(d.getUTCMonth() / 3) + 1}`;
};
/** Every quarter from `first` to `last` inclusive (`YYYY-Qn`). */
function quarters(first: string, last: string): string[] {
  const out: string[] = [];
  let [y, q] = first.split("-Q").map(Number);
  const [ly, lq] = last.split("-Q").map(Number);
  while (y < ly || (y === ly && q <= lq)) {
    out.push(`${y}-Q${q}`);
    q++;
    if (q > 4) {
      q = 1;
      y++;
    }
  }
  return out;
}
const inc = (m: Record<string, number>, k: string, by = 1) => {
  m[k] = (m[k] ?? 0) + by;
};
const median = (xs: number[]) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

/**
 * A total over terms some of which may be unknown: the USD sum and the exact token-unit sum of the
 * known terms, with the counts of unknown ones. Token units are kept as base units at the largest
 * decimals seen (`decimals`), so contracts of one coin with different decimals add up exactly.
 */
interface Tally {
  usd: number;
  usdCompensation: number;
  usdGaps: number;
  raw: bigint;
  decimals: number;
  rawGaps: number;
}
const tally = (): Tally => ({ usd: 0, usdCompensation: 0, usdGaps: 0, raw: 0n, decimals: 0, rawGaps: 0 });
/**
 * Adds one term: base units `amountRaw` of a `decimals` contract (null: unknown) and its USD value
 * (null: unknown). USD is summed with Neumaier compensation, so hundreds of terms lose no cents.
 */
function addTerm(t: Tally, amountRaw: string | null, decimals: number, usd: number | null): void {
  if (usd === null) t.usdGaps++;
  else {
    const sum = t.usd + usd;
    t.usdCompensation += Math.abs(t.usd) >= Math.abs(usd) ? t.usd - sum + usd : usd - sum + t.usd;
    t.usd = sum;
  }
  if (amountRaw === null) {
    t.rawGaps++;
    return;
  }
  if (decimals > t.decimals) {
    t.raw *= 10n ** BigInt(decimals - t.decimals);
    t.decimals = decimals;
  }
  t.raw += BigInt(amountRaw) * 10n ** BigInt(t.decimals - decimals);
}
/** USD total: null when any term's USD value is unknown (never a partial sum). */
const usdTotal = (t: Tally) => (t.usdGaps ? null : t.usd + t.usdCompensation);
/** Exact token-unit total as a decimal string: null when any amount is unknown. */
const exactTotal = (t: Tally) => (t.rawGaps ? null : decimalString(t.raw, t.decimals));
/** Per-key map of a tally field, keys sorted. */
const perKey = <T>(m: Record<string, Tally>, f: (t: Tally) => T) =>
  Object.fromEntries(
    Object.entries(m)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
      .map(([k, t]) => [k, f(t)]),
  );

/**
 * Builds the summary from the ledger (newest first), the tracked freeze configs and the chains, as
 * of `asOf` (Unix s). Active records replay events by time per (chain, contract, address): a
 * blacklist opens one (its balance at the freeze, when known), a destroy marks it destroyed, an
 * unblacklist closes it. Totals are USD (events valued at their day by the supply valuation rule),
 * with token-unit companions; a total with an unknown term is null and its unknown terms counted.
 * Amount-gap status: degraded at a missing ratio ≥ 1% or ≥ 5 recent (30 d) gaps, stale at ≥ 2% or
 * ≥ 25 (spec 2.8).
 */
export function blacklistSummary(
  events: BlacklistEvent[],
  coverageRows: FreezeCoverageRow[],
  chainRows: ChainRow[],
  asOf: number,
): BlacklistSummary {
  const chrono = [...events].sort(
    (a, b) => a.timestamp - b.timestamp || a.blockNumber - b.blockNumber || a.logIndex - b.logIndex,
  );
  const active = new Map<
    string,
    { symbol: string; amountRaw: string | null; decimals: number; usd: number | null; destroyed: boolean }
  >();
  const perCoinBlacklistCounts: Record<string, number> = {};
  const perCoinTotalEvents: Record<string, number> = {};
  const quarterly: Record<string, Record<string, { blacklist: number; unblacklist: number; destroy: number }>> = {};
  const destroyed = tally();
  const destroyedByCoin: Record<string, Tally> = {};
  const frozenThenDestroyedByCoin: Record<string, Tally> = {};
  const frozenDurations: number[] = [];
  for (const e of chrono) {
    const key = `${e.chainId}|${e.contractAddress}|${e.address}`;
    inc(perCoinTotalEvents, e.stablecoin);
    quarterly[e.stablecoin] ??= {};
    const byQuarter = quarterly[e.stablecoin];
    const quarter = quarterOf(e.timestamp);
    byQuarter[quarter] ??= { blacklist: 0, unblacklist: 0, destroy: 0 };
    byQuarter[quarter][e.eventType]++;
    if (e.eventType === "blacklist") {
      inc(perCoinBlacklistCounts, e.stablecoin);
      active.set(key, {
        symbol: e.stablecoin,
        amountRaw: e.amountRaw,
        decimals: e.decimals,
        usd: e.amountUsdAtEvent,
        destroyed: false,
      });
    } else if (e.eventType === "unblacklist") {
      active.delete(key);
    } else {
      const rec = active.get(key);
      if (rec) rec.destroyed = true;
      addTerm(destroyed, e.amountRaw, e.decimals, e.amountUsdAtEvent);
      destroyedByCoin[e.stablecoin] ??= tally();
      addTerm(destroyedByCoin[e.stablecoin], e.amountRaw, e.decimals, e.amountUsdAtEvent);
      if (e.linkedFreezeEventId) {
        frozenThenDestroyedByCoin[e.stablecoin] ??= tally();
        addTerm(frozenThenDestroyedByCoin[e.stablecoin], e.amountRaw, e.decimals, e.amountUsdAtEvent);
      }
      if (e.frozenDurationSec !== null) frozenDurations.push(e.frozenDurationSec);
    }
  }
  const live = [...active.values()].filter((r) => !r.destroyed);
  // Still on the on-chain list: every open record, destroyed or not (only an unblacklist removes an address).
  const onBlacklist = [...active.values()];
  const perCoinFrozenAddressCount: Record<string, number> = {};
  const frozen = tally();
  const frozenByCoin: Record<string, Tally> = {};
  for (const r of live) {
    inc(perCoinFrozenAddressCount, r.symbol);
    addTerm(frozen, r.amountRaw, r.decimals, r.usd);
    frozenByCoin[r.symbol] ??= tally();
    addTerm(frozenByCoin[r.symbol], r.amountRaw, r.decimals, r.usd);
  }
  const perCoinDestroyedTotalExact = perKey(destroyedByCoin, exactTotal);
  const perCoinQuarterlyEventTypes: Record<string, z.infer<typeof Quarterly>[]> = {};
  const allQuarters = events.length
    ? quarters(quarterOf(chrono[0].timestamp), quarterOf(chrono[chrono.length - 1].timestamp))
    : [];
  for (const [coin, byQ] of Object.entries(quarterly).sort()) {
    const keys = Object.keys(byQ).sort();
    perCoinQuarterlyEventTypes[coin] = quarters(keys[0], keys[keys.length - 1]).map((q) => ({
      quarter: q,
      ...(byQ[q] ?? { blacklist: 0, unblacklist: 0, destroy: 0 }),
    }));
  }
  const coins = Object.keys(perCoinTotalEvents).sort();
  const chart = allQuarters.map((q) => {
    const row: Record<string, string | number> = { quarter: q };
    let total = 0;
    for (const c of coins) {
      const v = quarterly[c]?.[q];
      const k = v ? v.blacklist + v.unblacklist + v.destroy : 0;
      row[c] = k;
      total += k;
    }
    row.total = total;
    return row;
  });
  const chainName = new Map(chainRows.map((c) => [String(c.id), String(c.name)]));
  const eventChains = [...new Set(events.map((e) => e.chainId))].sort();
  const withEvents = new Set(events.map((e) => e.configKey));
  const supportedRows = coverageRows.filter((c) => !c.unsupported_reason);
  const recordedConfigs = new Set(events.filter(isRecorded).map((e) => e.configKey));
  const providerSource = (c: FreezeCoverageRow) =>
    (c.chain_id === "tron" ? "trongrid" : "evm-rpc") + (recordedConfigs.has(c.config_key) ? "+recorded-archive" : "");
  const supported = supportedRows.map((c) => ({
    symbol: String(c.symbol),
    stablecoinId: String(c.stablecoin_id),
    chainId: String(c.chain_id),
    chainName: chainName.get(String(c.chain_id)) ?? String(c.chain_id),
    contractAddress: String(c.contract_address),
    configKey: String(c.config_key),
    providerSource: providerSource(c),
    eventFamilies: [String(c.family)],
    eventTypes: ["blacklist", "unblacklist", "destroy"],
  }));
  const unsupportedDeferred = coverageRows
    .filter((c) => c.unsupported_reason)
    .map((c) => ({ symbol: String(c.symbol), chainId: String(c.chain_id), reason: String(c.unsupported_reason) }));
  const countBy = <T>(xs: T[], f: (x: T) => string) => {
    const m: Record<string, number> = {};
    for (const x of xs) inc(m, f(x));
    return m;
  };
  const missing = events.filter((e) => e.amountRaw === null).length;
  const recent = events.filter((e) => e.timestamp > asOf - 30 * DAY);
  const recentMissing = recent.filter((e) => e.amountRaw === null).length;
  const missingRatio = events.length ? missing / events.length : 0;
  const gapStatus =
    missingRatio >= 0.02 || recentMissing >= 25
      ? "stale"
      : missingRatio >= 0.01 || recentMissing >= 5
        ? "degraded"
        : "ok";
  const newest = newestTs(events);
  const oldest = events.length ? Math.min(...events.map((e) => e.timestamp)) : null;
  const statusDistribution = countBy(events, (e) => e.amountStatus);
  const freshness = (e: BlacklistEvent) =>
    asOf - e.timestamp <= DAY ? "fresh" : asOf - e.timestamp <= 30 * DAY ? "recent" : "historical";
  const warnings: string[] = [];
  if (gapStatus !== "ok")
    warnings.push(
      `${missing} of ${events.length} events (${(missingRatio * 100).toFixed(1)}%) have no amount yet: freezes whose balance one block before was not read (no archive RPC for the recorded history); they count as amount gaps, never as zero.`,
    );
  if (newest !== null && asOf - newest > 30 * DAY)
    warnings.push(
      `newest freeze event is ${Math.floor((asOf - newest) / DAY)} days before as-of: recorded history ends there and no live ledger rows are newer.`,
    );
  const unsupportedCount = unsupportedDeferred.length;
  if (unsupportedCount)
    warnings.push(
      `${unsupportedCount} tracked configs are deferred (contract address or decimals unresolved) and contribute no events.`,
    );
  const destroyedRawAmounts = perKey(destroyedByCoin, (t) => (t.rawGaps ? null : t.raw.toString()));
  return {
    stats: {
      usdcBlacklisted: live.filter((r) => r.symbol === "USDC").length,
      usdtBlacklisted: live.filter((r) => r.symbol === "USDT").length,
      usdtAddressesOnBlacklist: onBlacklist.filter((r) => r.symbol === "USDT").length,
      goldBlacklisted: live.filter((r) => GOLD.has(r.symbol)).length,
      frozenAddresses: new Set([...active.entries()].filter(([, r]) => !r.destroyed).map(([k]) => k.split("|")[2]))
        .size,
      destroyedTotal: usdTotal(destroyed),
      destroyedAmountGapCount: destroyed.usdGaps,
      activeAddressCount: live.length,
      activeFrozenTotal: usdTotal(frozen),
      activeAmountGapCount: frozen.usdGaps,
      trackedAddressCount: live.length,
      // no current-balance snapshot is read yet: every active record is an unknown term (an empty set sums to 0)
      trackedFrozenTotal: live.length ? null : 0,
      trackedAmountGapCount: live.length,
      recentCount: recent.length,
      recentCount24h: events.filter((e) => e.timestamp > asOf - DAY).length,
      recoverableGapCount: events.filter(
        (e) => e.amountStatus === "recoverable_pending" || e.amountStatus === "provider_failed",
      ).length,
      perCoinBlacklistCounts,
      perCoinTotalEvents,
      perCoinFrozenAddressCount,
      perCoinFrozenTotal: perKey(frozenByCoin, usdTotal),
      perCoinFrozenTotalNative: perKey(frozenByCoin, (t) => {
        const x = exactTotal(t);
        return x === null ? null : Number(x);
      }),
      perCoinFrozenAmountGapCount: perKey(frozenByCoin, (t) => t.usdGaps),
      perCoinDestroyedTotal: perKey(destroyedByCoin, usdTotal),
      perCoinDestroyedTotalNative: Object.fromEntries(
        Object.entries(perCoinDestroyedTotalExact).map(([k, v]) => [k, v === null ? null : Number(v)]),
      ),
      perCoinDestroyedTotalExact,
      perCoinDestroyedAmountGapCount: perKey(destroyedByCoin, (t) => t.usdGaps),
      perCoinQuarterlyEventTypes,
      frozenThenDestroyed: {
        count: events.filter((e) => e.eventType === "destroy" && e.linkedFreezeEventId !== null).length,
        perCoinAmount: perKey(frozenThenDestroyedByCoin, exactTotal),
        perCoinAmountGapCount: perKey(frozenThenDestroyedByCoin, (t) => t.rawGaps),
        medianFrozenDurationSec: median(frozenDurations),
      },
    },
    chart,
    chains: eventChains.map((id) => ({ id, name: chainName.get(id) ?? id })),
    coverage: {
      supported,
      unsupportedDeferred,
      counts: {
        supportedConfigs: supported.length,
        unsupportedDeferredConfigs: unsupportedCount,
        bySymbol: countBy(supported, (c) => c.symbol),
        byChain: countBy(supported, (c) => c.chainId),
        byProviderSource: countBy(supported, (c) => c.providerSource),
      },
    },
    freezeLedgerMeta: {
      totalRows: events.length,
      scopedRows: events.filter(
        (e) => withEvents.has(e.configKey) && supported.some((s) => s.configKey === e.configKey),
      ).length,
      legacyRows: events.filter(isRecorded).length,
      oldestObservedAt: oldest,
      newestObservedAt: newest,
      oldestAgeSec: oldest === null ? null : asOf - oldest,
      newestAgeSec: newest === null ? null : asOf - newest,
      statusDistribution,
      sourceDistribution: countBy(events, (e) => e.amountSource),
      freshnessDistribution: countBy(events, freshness),
      currentFreshnessDistribution: countBy(
        events.filter((e) => e.eventType === "blacklist"),
        freshness,
      ),
      providerFailedCount: statusDistribution.provider_failed ?? 0,
      lastErrorClassDistribution: {},
      sourceCategoryCounts: countBy(events, (e) => (isRecorded(e) ? "recorded" : "live")),
      gaps: {
        amountGaps: missing,
        recoverable: statusDistribution.recoverable_pending ?? 0,
        providerFailed: statusDistribution.provider_failed ?? 0,
        permanentlyUnavailable: statusDistribution.permanently_unavailable ?? 0,
      },
    },
    dataQuality: {
      status: gapStatus,
      warnings,
      amountGaps: { missing, recentMissing, recentWindowSec: 30 * DAY, missingRatio },
      freezeLedger: { rows: events.length, newestAgeSec: newest === null ? null : asOf - newest },
      coverage: {
        supportedConfigs: supported.length,
        configsWithEvents: supported.filter((c) => withEvents.has(c.configKey)).length,
      },
    },
    reconciliation: {
      status: new Set(events.map((e) => e.id)).size === events.length ? "ok" : "mismatch",
      runId: `build-${asOf}`,
      manifestId: null,
      manifestSha256: null,
      bookmarkRecorded: false,
      expectedEventCount: events.length,
      presentEventCount: new Set(events.map((e) => e.id)).size,
      missingEventCount: 0,
      duplicateIdentityCount: events.length - new Set(events.map((e) => e.id)).size,
      destroyedRawAmounts,
      balanceReplayCounts: {
        replayed: events.filter((e) => e.amountSource === "historical_balance").length,
        unresolved: missing,
      },
      unresolvedManifestGapCount: 0,
      tronSafeHead: true,
      arbitrumSafeHead: true,
      startedAt: asOf,
      completedAt: asOf,
    },
    totalEvents: events.length,
    methodology: methodology(FREEZE_METHODOLOGY, FREEZE_METHODOLOGY_LABEL, asOf),
  };
}

const isRecorded = (e: BlacklistEvent) => e.origin === "recorded";

/** `/api/blacklist-summary` as published (spec 2.5), schema-checked at build and at read. */
export const blacklistSummaryArtifact = sqlArtifact(import.meta.url, {
  key: "blacklist-summary",
  schemaVersion: "2.0.0",
  maxAgeSec: 900,
  description: "Freeze/blacklist summary: stats, quarterly chart, coverage, ledger meta, data quality, reconciliation.",
  path: "site-data/blacklist-summary.json",
  schema: BlacklistSummarySchema,
  sql: "blacklist_summary",
  shape: "one",
  transform: (row: FreezeRow, ctx) => blacklistSummary(row.events.map(toEvent), row.coverage, row.chains, ctx.asOf),
  rows: (summary: BlacklistSummary) => summary.totalEvents,
  dataAsOf: (summary: BlacklistSummary) => summary.freezeLedgerMeta.newestObservedAt,
});
