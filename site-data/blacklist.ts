import { z } from "zod";
import { decimalString } from "../pipelines/onchain/contract.ts";
import { explorerUrls } from "../pipelines/onchain/explorers.ts";
import { FREEZE_METHODOLOGY, FREEZE_METHODOLOGY_LABEL } from "../pipelines/onchain/methodology.ts";
import { type Artifact, num } from "./contract.ts";
import { methodology, MethodologySchema } from "./peg-summary.ts";

export { FREEZE_METHODOLOGY, FREEZE_METHODOLOGY_LABEL } from "../pipelines/onchain/methodology.ts";

/** Spec 4.1: recent windows of the summary (s). */
const DAY = 86400;
/** Gold-backed coins counted in `goldBlacklisted`. */
const GOLD = new Set(["PAXG", "XAUT"]);

/**
 * BlacklistEvent (spec 2.5). Amounts: `amountNative` in token units (exact decimal of the base units,
 * then a JSON number), `amountRaw` the exact base units as a string (our addition), `amountUsdAtEvent`
 * USD at the event day's price; null when unknown, never zero. `linkedFreezeEventId` and
 * `frozenDurationSec` (s) link a destroy to the freeze that made it possible.
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
  amountSource: z.enum(["event", "historical_balance", "current_balance_snapshot", "derived", "legacy_migration", "unavailable"]),
  amountStatus: z.enum(["resolved", "recoverable_pending", "permanently_unavailable", "provider_failed", "ambiguous"]),
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

/** `site-data/blacklist-events.json`: the whole freeze ledger, newest first (`timestamp` desc, `id` desc), and the registry chains (for `chain`/`chainId`). */
export const BlacklistLedgerSchema = z.object({ events: z.array(BlacklistEventSchema), chains: z.array(z.object({ id: z.string(), name: z.string() })) });
export type BlacklistLedger = z.infer<typeof BlacklistLedgerSchema>;

const LEDGER_SQL = "select * from blacklist_events order by ts desc, id desc";
const COVERAGE_SQL = `select config_key, stablecoin_id, symbol, chain_id, contract_address, family, decimals, start_block, unsupported_reason
  from registry_tracked_contracts where purpose = 'freeze' order by config_key`;
const CHAINS_SQL = "select id, name from registry_chains order by id";

const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** One `blacklist_events` mart row → BlacklistEvent. */
function toEvent(r: Record<string, any>): BlacklistEvent {
  const raw = r.amount_raw === null || r.amount_raw === undefined ? null : String(r.amount_raw);
  return {
    id: r.id, stablecoin: r.symbol, stablecoinId: r.stablecoin_id, chainId: r.chain_id, chainName: r.chain_name, eventType: r.event_type,
    address: r.address, amountNative: raw === null ? null : Number(decimalString(raw, Number(r.decimals))), amountRaw: raw, decimals: Number(r.decimals),
    amountUsdAtEvent: num(r.amount_usd_at_event), amountSource: r.amount_source, amountStatus: r.amount_status, txHash: r.tx_hash,
    blockNumber: Number(r.block_number), logIndex: Number(r.log_index), timestamp: Number(r.ts), methodologyVersion: r.methodology_version,
    contractAddress: r.contract_address ?? null, configKey: r.config_key ?? null, eventSignature: r.event_signature ?? null, eventTopic0: r.topic0 ?? null,
    suppressionReason: null, ...explorerUrls(r.chain_id, r.tx_hash, r.address),
    linkedFreezeEventId: r.linked_freeze_event_id ?? null, frozenDurationSec: n(r.frozen_duration_sec), origin: r.origin,
  };
}

/** Newest block time among the ledger rows (Unix s): the data time of the freeze artifacts. */
const newestTs = (events: { timestamp: number }[]) => (events.length ? Math.max(...events.map((e) => e.timestamp)) : null);

/** The freeze ledger `/api/blacklist` pages (filters, four sort keys, keyset cursors: api/queries/blacklist.ts). */
export const blacklistLedgerArtifact: Artifact = {
  key: "blacklist",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  schema: BlacklistLedgerSchema,
  outputs: { main: { path: "site-data/blacklist-events.json", schema: BlacklistLedgerSchema } },
  description: "Freeze/blacklist events of tracked contracts, newest first.",
  queries: { events: LEDGER_SQL, chains: CHAINS_SQL },
  assemble(rows) {
    const events = rows.events.map(toEvent);
    const chains = rows.chains.map((c) => ({ id: String(c.id), name: String(c.name) }));
    return { files: [{ path: blacklistLedgerArtifact.outputs.main.path, payload: { events, chains }, rows: events.length }], dataAsOf: newestTs(events) };
  },
};

const Quarterly = z.object({ quarter: z.string(), blacklist: z.number().int(), unblacklist: z.number().int(), destroy: z.number().int() });
const Distribution = z.record(z.string(), z.number().int());

/** `/api/blacklist-summary` (spec 2.5). Per-coin totals are token units; `*Total` without a coin are USD. */
export const BlacklistSummarySchema = z.object({
  stats: z.object({
    usdcBlacklisted: z.number().int(), usdtBlacklisted: z.number().int(), goldBlacklisted: z.number().int(), frozenAddresses: z.number().int(),
    destroyedTotal: z.number(), activeAddressCount: z.number().int(), activeFrozenTotal: z.number(), activeAmountGapCount: z.number().int(),
    trackedAddressCount: z.number().int(), trackedFrozenTotal: z.number(), trackedAmountGapCount: z.number().int(),
    recentCount: z.number().int(), recentCount24h: z.number().int(), recoverableGapCount: z.number().int(),
    perCoinBlacklistCounts: Distribution, perCoinTotalEvents: Distribution, perCoinFrozenAddressCount: Distribution,
    perCoinFrozenTotal: z.record(z.string(), z.number()), perCoinDestroyedTotal: z.record(z.string(), z.number()),
    perCoinDestroyedTotalExact: z.record(z.string(), z.string()),
    perCoinQuarterlyEventTypes: z.record(z.string(), z.array(Quarterly)),
    frozenThenDestroyed: z.object({ count: z.number().int(), perCoinAmount: z.record(z.string(), z.string()), medianFrozenDurationSec: z.number().int().nullable() }),
  }),
  chart: z.array(z.record(z.string(), z.union([z.string(), z.number()]))),
  chains: z.array(z.object({ id: z.string(), name: z.string() })),
  coverage: z.object({
    supported: z.array(z.object({
      symbol: z.string(), stablecoinId: z.string(), chainId: z.string(), chainName: z.string(), contractAddress: z.string(), configKey: z.string(),
      providerSource: z.string(), eventFamilies: z.array(z.string()), eventTypes: z.array(z.string()),
    })),
    unsupportedDeferred: z.array(z.object({ symbol: z.string(), chainId: z.string(), reason: z.string() })),
    counts: z.object({ supportedConfigs: z.number().int(), unsupportedDeferredConfigs: z.number().int(), bySymbol: Distribution, byChain: Distribution, byProviderSource: Distribution }),
  }),
  freezeLedgerMeta: z.object({
    totalRows: z.number().int(), scopedRows: z.number().int(), legacyRows: z.number().int(),
    oldestObservedAt: z.number().int().nullable(), newestObservedAt: z.number().int().nullable(), oldestAgeSec: z.number().int().nullable(), newestAgeSec: z.number().int().nullable(),
    statusDistribution: Distribution, sourceDistribution: Distribution, freshnessDistribution: Distribution, currentFreshnessDistribution: Distribution,
    providerFailedCount: z.number().int(), lastErrorClassDistribution: Distribution, sourceCategoryCounts: Distribution,
    gaps: z.object({ amountGaps: z.number().int(), recoverable: z.number().int(), providerFailed: z.number().int(), permanentlyUnavailable: z.number().int() }),
  }),
  dataQuality: z.object({
    status: z.enum(["ok", "degraded", "stale"]), warnings: z.array(z.string()),
    amountGaps: z.object({ missing: z.number().int(), recentMissing: z.number().int(), recentWindowSec: z.number().int(), missingRatio: z.number() }),
    freezeLedger: z.object({ rows: z.number().int(), newestAgeSec: z.number().int().nullable() }),
    coverage: z.object({ supportedConfigs: z.number().int(), configsWithEvents: z.number().int() }),
  }),
  reconciliation: z.object({
    status: z.enum(["ok", "mismatch"]), runId: z.string(), manifestId: z.string().nullable(), manifestSha256: z.string().nullable(), bookmarkRecorded: z.boolean(),
    expectedEventCount: z.number().int(), presentEventCount: z.number().int(), missingEventCount: z.number().int(), duplicateIdentityCount: z.number().int(),
    destroyedRawAmounts: z.record(z.string(), z.string()), balanceReplayCounts: z.object({ replayed: z.number().int(), unresolved: z.number().int() }),
    unresolvedManifestGapCount: z.number().int(), tronSafeHead: z.boolean(), arbitrumSafeHead: z.boolean(), startedAt: z.number().int(), completedAt: z.number().int(),
  }),
  totalEvents: z.number().int(),
  methodology: MethodologySchema,
});
export type BlacklistSummary = z.infer<typeof BlacklistSummarySchema>;

const quarterOf = (ts: number) => { const d = new Date(ts * 1000); return `${d.getUTCFullYear()}-Q${Math.floor(d.getUTCMonth() / 3) + 1}`; };
/** Every quarter from `first` to `last` inclusive (`YYYY-Qn`). */
function quarters(first: string, last: string): string[] {
  const out: string[] = [];
  let [y, q] = first.split("-Q").map(Number);
  const [ly, lq] = last.split("-Q").map(Number);
  while (y < ly || (y === ly && q <= lq)) { out.push(`${y}-Q${q}`); q++; if (q > 4) { q = 1; y++; } }
  return out;
}
const inc = (m: Record<string, number>, k: string, by = 1) => { m[k] = (m[k] ?? 0) + by; };
const median = (xs: number[]) => { if (!xs.length) return null; const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };

/**
 * Builds the summary from the ledger (newest first), the tracked freeze configs and the chains, as
 * of `asOf` (Unix s). Active records replay events by time per (chain, contract, address): a
 * blacklist opens one (its amount, when known), a destroy marks it destroyed, an unblacklist closes
 * it. Amount-gap status: degraded at a missing ratio ≥ 1% or ≥ 5 recent (30 d) gaps, stale at ≥ 2%
 * or ≥ 25 (spec 2.8).
 */
export function blacklistSummary(events: BlacklistEvent[], coverageRows: Record<string, any>[], chainRows: Record<string, any>[], asOf: number): BlacklistSummary {
  const chrono = [...events].sort((a, b) => a.timestamp - b.timestamp || a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  const active = new Map<string, { symbol: string; amount: number | null; usd: number | null; destroyed: boolean }>();
  const perCoinBlacklistCounts: Record<string, number> = {};
  const perCoinTotalEvents: Record<string, number> = {};
  const destroyedRaw: Record<string, bigint> = {};
  const decimalsOf: Record<string, number> = {};
  const quarterly: Record<string, Record<string, { blacklist: number; unblacklist: number; destroy: number }>> = {};
  let destroyedUsd = 0;
  const frozenThenDestroyedRaw: Record<string, bigint> = {};
  const frozenDurations: number[] = [];
  for (const e of chrono) {
    const key = `${e.chainId}|${e.contractAddress}|${e.address}`;
    inc(perCoinTotalEvents, e.stablecoin);
    ((quarterly[e.stablecoin] ??= {})[quarterOf(e.timestamp)] ??= { blacklist: 0, unblacklist: 0, destroy: 0 })[e.eventType]++;
    if (e.eventType === "blacklist") {
      inc(perCoinBlacklistCounts, e.stablecoin);
      active.set(key, { symbol: e.stablecoin, amount: e.amountNative, usd: e.amountUsdAtEvent, destroyed: false });
    } else if (e.eventType === "unblacklist") {
      active.delete(key);
    } else {
      const rec = active.get(key);
      if (rec) rec.destroyed = true;
      if (e.amountRaw !== null) {
        destroyedRaw[e.stablecoin] = (destroyedRaw[e.stablecoin] ?? 0n) + BigInt(e.amountRaw);
        decimalsOf[e.stablecoin] = e.decimals;
        if (e.linkedFreezeEventId) frozenThenDestroyedRaw[e.stablecoin] = (frozenThenDestroyedRaw[e.stablecoin] ?? 0n) + BigInt(e.amountRaw);
      }
      if (e.amountUsdAtEvent !== null) destroyedUsd += e.amountUsdAtEvent;
      if (e.frozenDurationSec !== null) frozenDurations.push(e.frozenDurationSec);
    }
  }
  const live = [...active.values()].filter((r) => !r.destroyed);
  const perCoinFrozenAddressCount: Record<string, number> = {};
  const perCoinFrozenTotal: Record<string, number> = {};
  for (const r of live) {
    inc(perCoinFrozenAddressCount, r.symbol);
    if (r.amount !== null) inc(perCoinFrozenTotal as Record<string, number>, r.symbol, r.amount);
  }
  const exact = (m: Record<string, bigint>) => Object.fromEntries(Object.entries(m).sort().map(([k, v]) => [k, decimalString(v, decimalsOf[k] ?? 0)]));
  const perCoinDestroyedTotalExact = exact(destroyedRaw);
  const perCoinQuarterlyEventTypes: Record<string, z.infer<typeof Quarterly>[]> = {};
  const allQuarters = events.length ? quarters(quarterOf(chrono[0].timestamp), quarterOf(chrono.at(-1)!.timestamp)) : [];
  for (const [coin, byQ] of Object.entries(quarterly).sort()) {
    const keys = Object.keys(byQ).sort();
    perCoinQuarterlyEventTypes[coin] = quarters(keys[0], keys.at(-1)!).map((q) => ({ quarter: q, ...(byQ[q] ?? { blacklist: 0, unblacklist: 0, destroy: 0 }) }));
  }
  const coins = Object.keys(perCoinTotalEvents).sort();
  const chart = allQuarters.map((q) => {
    const row: Record<string, string | number> = { quarter: q };
    let total = 0;
    for (const c of coins) { const v = quarterly[c]?.[q]; const k = v ? v.blacklist + v.unblacklist + v.destroy : 0; row[c] = k; total += k; }
    row.total = total;
    return row;
  });
  const chainName = new Map(chainRows.map((c) => [String(c.id), String(c.name)]));
  const eventChains = [...new Set(events.map((e) => e.chainId))].sort();
  const withEvents = new Set(events.map((e) => e.configKey));
  const supportedRows = coverageRows.filter((c) => !c.unsupported_reason);
  const recordedConfigs = new Set(events.filter(isRecorded).map((e) => e.configKey));
  const providerSource = (c: Record<string, any>) => (c.chain_id === "tron" ? "trongrid" : "evm-rpc") + (recordedConfigs.has(c.config_key) ? "+recorded-archive" : "");
  const supported = supportedRows.map((c) => ({
    symbol: String(c.symbol), stablecoinId: String(c.stablecoin_id), chainId: String(c.chain_id), chainName: chainName.get(String(c.chain_id)) ?? String(c.chain_id),
    contractAddress: String(c.contract_address), configKey: String(c.config_key), providerSource: providerSource(c), eventFamilies: [String(c.family)],
    eventTypes: ["blacklist", "unblacklist", "destroy"],
  }));
  const unsupportedDeferred = coverageRows.filter((c) => c.unsupported_reason).map((c) => ({ symbol: String(c.symbol), chainId: String(c.chain_id), reason: String(c.unsupported_reason) }));
  const countBy = <T>(xs: T[], f: (x: T) => string) => { const m: Record<string, number> = {}; for (const x of xs) inc(m, f(x)); return m; };
  const missing = events.filter((e) => e.amountRaw === null).length;
  const recent = events.filter((e) => e.timestamp > asOf - 30 * DAY);
  const recentMissing = recent.filter((e) => e.amountRaw === null).length;
  const missingRatio = events.length ? missing / events.length : 0;
  const gapStatus = missingRatio >= 0.02 || recentMissing >= 25 ? "stale" : missingRatio >= 0.01 || recentMissing >= 5 ? "degraded" : "ok";
  const newest = newestTs(events);
  const oldest = events.length ? Math.min(...events.map((e) => e.timestamp)) : null;
  const statusDistribution = countBy(events, (e) => e.amountStatus);
  const freshness = (e: BlacklistEvent) => (asOf - e.timestamp <= DAY ? "fresh" : asOf - e.timestamp <= 30 * DAY ? "recent" : "historical");
  const warnings: string[] = [];
  if (gapStatus !== "ok") warnings.push(`${missing} of ${events.length} events (${(missingRatio * 100).toFixed(1)}%) have no amount yet: freezes whose balance one block before was not read (no archive RPC for the recorded history); they count as amount gaps, never as zero.`);
  if (newest !== null && asOf - newest > 30 * DAY) warnings.push(`newest freeze event is ${Math.floor((asOf - newest) / DAY)} days before as-of: recorded history ends there and no live ledger rows are newer.`);
  const unsupportedCount = unsupportedDeferred.length;
  if (unsupportedCount) warnings.push(`${unsupportedCount} tracked configs are deferred (contract address or decimals unresolved) and contribute no events.`);
  const destroyedRawAmounts = Object.fromEntries(Object.entries(destroyedRaw).sort().map(([k, v]) => [k, v.toString()]));
  return {
    stats: {
      usdcBlacklisted: live.filter((r) => r.symbol === "USDC").length,
      usdtBlacklisted: live.filter((r) => r.symbol === "USDT").length,
      goldBlacklisted: live.filter((r) => GOLD.has(r.symbol)).length,
      frozenAddresses: new Set([...active.entries()].filter(([, r]) => !r.destroyed).map(([k]) => k.split("|")[2])).size,
      destroyedTotal: destroyedUsd,
      activeAddressCount: live.length,
      activeFrozenTotal: live.reduce((s, r) => s + (r.usd ?? 0), 0),
      activeAmountGapCount: live.filter((r) => r.amount === null).length,
      trackedAddressCount: live.length,
      trackedFrozenTotal: 0,
      trackedAmountGapCount: live.length,
      recentCount: recent.length,
      recentCount24h: events.filter((e) => e.timestamp > asOf - DAY).length,
      recoverableGapCount: events.filter((e) => e.amountStatus === "recoverable_pending" || e.amountStatus === "provider_failed").length,
      perCoinBlacklistCounts, perCoinTotalEvents, perCoinFrozenAddressCount, perCoinFrozenTotal,
      perCoinDestroyedTotal: Object.fromEntries(Object.entries(perCoinDestroyedTotalExact).map(([k, v]) => [k, Number(v)])),
      perCoinDestroyedTotalExact,
      perCoinQuarterlyEventTypes,
      frozenThenDestroyed: {
        count: events.filter((e) => e.eventType === "destroy" && e.linkedFreezeEventId !== null).length,
        perCoinAmount: exact(frozenThenDestroyedRaw),
        medianFrozenDurationSec: median(frozenDurations),
      },
    },
    chart,
    chains: eventChains.map((id) => ({ id, name: chainName.get(id) ?? id })),
    coverage: {
      supported, unsupportedDeferred,
      counts: {
        supportedConfigs: supported.length, unsupportedDeferredConfigs: unsupportedCount,
        bySymbol: countBy(supported, (c) => c.symbol), byChain: countBy(supported, (c) => c.chainId), byProviderSource: countBy(supported, (c) => c.providerSource),
      },
    },
    freezeLedgerMeta: {
      totalRows: events.length, scopedRows: events.filter((e) => withEvents.has(e.configKey) && supported.some((s) => s.configKey === e.configKey)).length,
      legacyRows: events.filter(isRecorded).length,
      oldestObservedAt: oldest, newestObservedAt: newest, oldestAgeSec: oldest === null ? null : asOf - oldest, newestAgeSec: newest === null ? null : asOf - newest,
      statusDistribution, sourceDistribution: countBy(events, (e) => e.amountSource), freshnessDistribution: countBy(events, freshness),
      currentFreshnessDistribution: countBy(events.filter((e) => e.eventType === "blacklist"), freshness),
      providerFailedCount: statusDistribution.provider_failed ?? 0, lastErrorClassDistribution: {},
      sourceCategoryCounts: countBy(events, (e) => (isRecorded(e) ? "recorded" : "live")),
      gaps: { amountGaps: missing, recoverable: statusDistribution.recoverable_pending ?? 0, providerFailed: statusDistribution.provider_failed ?? 0, permanentlyUnavailable: statusDistribution.permanently_unavailable ?? 0 },
    },
    dataQuality: {
      status: gapStatus, warnings,
      amountGaps: { missing, recentMissing, recentWindowSec: 30 * DAY, missingRatio },
      freezeLedger: { rows: events.length, newestAgeSec: newest === null ? null : asOf - newest },
      coverage: { supportedConfigs: supported.length, configsWithEvents: supported.filter((c) => withEvents.has(c.configKey)).length },
    },
    reconciliation: {
      status: new Set(events.map((e) => e.id)).size === events.length ? "ok" : "mismatch", runId: `build-${asOf}`, manifestId: null, manifestSha256: null, bookmarkRecorded: false,
      expectedEventCount: events.length, presentEventCount: new Set(events.map((e) => e.id)).size, missingEventCount: 0,
      duplicateIdentityCount: events.length - new Set(events.map((e) => e.id)).size, destroyedRawAmounts,
      balanceReplayCounts: { replayed: events.filter((e) => e.amountSource === "historical_balance").length, unresolved: missing },
      unresolvedManifestGapCount: 0, tronSafeHead: true, arbitrumSafeHead: true, startedAt: asOf, completedAt: asOf,
    },
    totalEvents: events.length,
    methodology: methodology(FREEZE_METHODOLOGY, FREEZE_METHODOLOGY_LABEL, asOf),
  };
}

const isRecorded = (e: BlacklistEvent) => e.origin === "recorded";

/** `/api/blacklist-summary` as published (spec 2.5), schema-checked at build and at read. */
export const blacklistSummaryArtifact: Artifact = {
  key: "blacklist-summary",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  schema: BlacklistSummarySchema,
  outputs: { main: { path: "site-data/blacklist-summary.json", schema: BlacklistSummarySchema } },
  description: "Freeze/blacklist summary: stats, quarterly chart, coverage, ledger meta, data quality, reconciliation.",
  queries: { events: LEDGER_SQL, coverage: COVERAGE_SQL, chains: CHAINS_SQL },
  assemble(rows, ctx) {
    const events = rows.events.map(toEvent);
    const payload = blacklistSummary(events, rows.coverage, rows.chains, ctx.asOf);
    return { files: [{ path: blacklistSummaryArtifact.outputs.main.path, payload, rows: events.length }], dataAsOf: newestTs(events) };
  },
};
