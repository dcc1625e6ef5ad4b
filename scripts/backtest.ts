/**
 * `make backtest`: runs price consensus and depeg detection over every recorded price archive
 * (daily prices 2020-12 → 2025-02, CoinGecko histories, Binance 1-minute USDC/USDT candles and the
 * 15-minute USDC series of the SVB week) and prints every event found with its fields and the
 * observations that opened, peaked and closed it, then every lone print detection flagged and did
 * not use as evidence (`depeg_flagged_prints`: a print its neighbours contradict, unconfirmed), each
 * with its neighbours and quotes. Nothing is published.
 * Usage: tsx scripts/backtest.ts [--as-of ISO] [--coin <stablecoin-id>]
 */
import { loadBuildConfig } from "../build/config.ts";
import { loadAndModel } from "../build/stages/model.ts";
import type { EventTrace } from "../pipelines/analytics/depeg-detection.ts";

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const asOf = Math.floor(Date.parse(arg("--as-of") ?? "2025-09-07T00:00:00Z") / 1000);
const onlyCoin = arg("--coin");
const config = loadBuildConfig();
process.env.BALLAST_LOG ??= "silent";

const t0 = performance.now();
const { db, modelRun: run } = await loadAndModel({ asOf, captureDir: config.BALLAST_CAPTURE_DIR });
const ms = performance.now() - t0;

const iso = (s: number | null) => (s === null ? "—" : new Date(s * 1000).toISOString().replace(".000Z", "Z"));
const traceLine = (label: string, t: EventTrace | null) => {
  if (!t) return `    ${label.padEnd(10)} —`;
  const quotes = t.quotes
    .map((q) => `${q.source}(${q.category}, family ${q.family ?? q.source})=${q.price.toFixed(5)}@${iso(q.observedAt)}`)
    .join(", ");
  const bar = t.bar
    ? `  set by bar ${t.bar.source} ${t.bar.intervalSec / 60}m ending ${iso(t.bar.barEndTs)} extreme ${t.bar.price.toFixed(5)} USD`
    : "";
  return `    ${label.padEnd(10)} slot ${iso(t.ts)}  ${t.bar ? "bar" : "consensus"} ${t.price.toFixed(5)} [${t.priceSource}]  ${t.bps} bps${bar}  ← ${quotes}`;
};
/** A `depeg_incidents` row as printed (its JSON columns parsed; BIGINT columns may arrive as text). */
type IncidentRow = Record<string, unknown> & {
  trace_json: string;
  provenance_json: string;
  source_families: string | null;
};
const events = await db.all<IncidentRow>(
  `
  select * from depeg_incidents ${onlyCoin ? "where stablecoin_id = $coin" : ""}
  order by stablecoin_id, started_at`,
  onlyCoin ? { coin: onlyCoin } : undefined,
);
/** A `depeg_flagged_prints` row (BIGINT columns may arrive as text). */
type FlaggedRow = {
  stablecoin_id: string;
  symbol: string;
  slot_ts: number | string;
  price: number;
  deviation_bps: number | string;
  previous_ts: number | string;
  previous_bps: number | string;
  next_ts: number | string;
  next_bps: number | string;
  quotes_json: string;
};
const flagged = await db.all<FlaggedRow>(
  `select * from depeg_flagged_prints ${onlyCoin ? "where stablecoin_id = $coin" : ""} order by stablecoin_id, slot_ts`,
  onlyCoin ? { coin: onlyCoin } : undefined,
);
const flaggedLine = (f: FlaggedRow) => {
  const quotes = (JSON.parse(f.quotes_json) as [string, string, number, number][])
    .map(([source, category, price, at]) => `${source}(${category})=${price.toFixed(5)}@${iso(at)}`)
    .join(", ");
  return `slot ${iso(Number(f.slot_ts))} ${Number(f.price).toFixed(5)} ${f.deviation_bps} bps  neighbours ${f.previous_bps} bps @${iso(Number(f.previous_ts))}, ${f.next_bps} bps @${iso(Number(f.next_ts))}  ← ${quotes}`;
};
const coverage = await db.all<{ coins: number; slots: number; first: number | null; last: number | null }>(`
  select count(distinct stablecoin_id)::integer as coins, count(*)::integer as slots, min(slot_ts)::integer as first, max(slot_ts)::integer as last
  from price_consensus_slots where kind = 'backfill'`);
console.log(
  `Backtest over recorded price history: ${coverage[0].coins} coins, ${coverage[0].slots} judged 15-minute slots, ${iso(coverage[0].first)} → ${iso(coverage[0].last)}`,
);
console.log(`quality rejections: ${JSON.stringify(run.rejected)}`);
const byFamilies = new Map<number, number>();
for (const e of events) {
  const n = e.source_families ? String(e.source_families).split("+").length : 0;
  byFamilies.set(n, (byFamilies.get(n) ?? 0) + 1);
}
const rejections = await db.all<{ reason: string; n: number; coins: number }>(
  "select reason, count(*)::integer as n, count(distinct stablecoin_id)::integer as coins from price_observation_rejections group by reason order by reason",
);
console.log(
  `rejected observations: ${rejections.map((r) => `${r.reason} ${r.n} (${r.coins} coins)`).join(", ") || "none"}`,
);
const unjudged = await db.all<{ nav: number; floating: number }>(
  "select count(*) filter (where nav_token)::integer as nav, count(*) filter (where floating_peg)::integer as floating from registry_coins",
);
console.log(
  `not judged against a fixed reference: ${unjudged[0].nav} NAV tokens, ${unjudged[0].floating} floating pegs`,
);
console.log(
  `${events.length} incidents${onlyCoin ? ` for ${onlyCoin}` : ""} (as-of ${iso(asOf)}; ${(ms / 1000).toFixed(1)} s); by independent source families: ${[
    ...byFamilies.entries(),
  ]
    .sort(([a], [b]) => a - b)
    .map(([n, c]) => `${n} famil${n === 1 ? "y" : "ies"}: ${c}`)
    .join(", ")}\n`,
);
for (const e of events) {
  const trace = JSON.parse(e.trace_json);
  const prov = JSON.parse(e.provenance_json);
  console.log(
    `#${e.id} ${e.stablecoin_id} (${e.symbol}, ${e.peg_type}) ${e.direction} peak ${e.peak_deviation_bps} bps  source=${e.source}`,
  );
  console.log(
    `    started ${iso(Number(e.started_at))} at ${Number(e.start_price).toFixed(5)}  peak price ${e.peak_price === null ? "—" : Number(e.peak_price).toFixed(5)}  ended ${iso(e.ended_at === null ? null : Number(e.ended_at))}  recovery ${e.recovery_price === null ? "—" : Number(e.recovery_price).toFixed(5)}  closeReason ${e.close_reason ?? "— (open)"}`,
  );
  console.log(`    independent source families ${e.source_families || "—"}  confidenceTier ${prov.confidenceTier}`);
  console.log(
    `    pegReference ${e.peg_reference} (${prov.pegReferenceSource})  confirmationSources ${e.confirmation_sources ?? "—"}  pendingReason ${e.pending_reason ?? "—"}  constituents ${e.constituent_event_count}  policy ${prov.confirmationPolicy}  providers ${prov.sourcePriceProviders.join(",")}`,
  );
  console.log(traceLine("first seen", trace.firstSeen));
  console.log(traceLine("opened", trace.opened));
  console.log(traceLine("peak", trace.peak));
  console.log(traceLine("closed", trace.closed));
  const end = e.ended_at === null ? asOf : Number(e.ended_at);
  for (const f of flagged)
    if (f.stablecoin_id === e.stablecoin_id && Number(f.slot_ts) >= Number(e.started_at) && Number(f.slot_ts) <= end)
      console.log(`    ${"flagged".padEnd(10)} ${flaggedLine(f)}`);
}
console.log(
  `\n${flagged.length} lone prints flagged, not used as depeg evidence (neighbours contradict them, nothing confirms them):`,
);
for (const f of flagged) console.log(`  ${f.stablecoin_id} (${f.symbol}) ${flaggedLine(f)}`);
db.close();
