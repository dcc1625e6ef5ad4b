import { DEPEG_AUDIT_VERSION } from "./depeg-audit.version.ts";
import { SUPPLY_FLOOR_USD } from "./depeg-detection.ts";
import { DEPEG_METHODOLOGY_VERSION } from "./depeg-detection.version.ts";
import type { ValidationEvent } from "./dews-validation.ts";

/**
 * Audit of the depeg history (spec 4.5 `audit-depeg-history`), methodology `ballast-depeg-audit-v1`.
 * Pure: the job (build/depeg-backtest.ts) runs the backtest (price consensus + detection over every
 * recorded price archive, as `make backtest` does) and hands each incident here with the facts read
 * from the build database; the incidents the serving build published are compared with it.
 *
 * Findings (kinds):
 * - `lone-print-peak`: the peak's quotes come from one source family, and no other slot of the
 *   incident reaches half of the peak's |deviation| (its peak rests on a single print).
 * - `small-supply`: the coin's circulating USD at the start (latest daily supply point at or before
 *   it) is below max(`min-supply`, the detection's floor $1M);
 * - `unknown-supply`: no supply point at or before the start (the event cannot be sized).
 * - `synthetic-split`: consecutive closed incidents of one coin and direction less than 24 h apart
 *   (end to next start): one episode split into several events. One finding per chain, on its
 *   first incident; the `synthetic-splits` repair merges the chain into it.
 * - `not-reproduced`: an incident the serving build published that the current rules over the
 *   recorded history do not produce (ids are deterministic: coin, start, source).
 *
 * Version: `DEPEG_AUDIT_VERSION` (./depeg-audit.version.ts).
 */
export const SPLIT_GAP_SEC = 24 * 3600;
export const LONE_PEAK_RATIO = 0.5;

/** One incident of the backtest with the facts the audit judges (bps signed, times Unix s, USD). */
export interface AuditEvent extends ValidationEvent {
  /** Distinct source families of the peak slot's quotes (0 when the trace has none). */
  peakFamilies: number;
  /** Largest |deviation| (bps) of the incident's other slots; null when the peak is its only slot. */
  otherSlotsMaxBps: number | null;
  /** Circulating USD at the start, null when no supply point precedes it. */
  supplyUsdAtStart: number | null;
}
/** An incident the serving build published (id, coin, symbol, start). */
export interface PublishedEvent {
  id: number;
  stablecoinId: string;
  symbol: string;
  startedAt: number;
}

export type FindingKind = "lone-print-peak" | "small-supply" | "unknown-supply" | "synthetic-split" | "not-reproduced";
/** One finding: its kind, the incident it is about, and the facts behind it. */
export interface AuditFinding {
  kind: FindingKind;
  eventId: number;
  stablecoinId: string;
  symbol: string;
  startedAt: number;
  detail: Record<string, number | string | number[] | null>;
}
/** Audit filters: `symbol` (case-insensitive, null: all) and `minSupply` (USD ≥ 0). */
export interface AuditFilters {
  symbol: string | null;
  minSupply: number;
}

/** Findings over `events` (the backtest) and `published` (the serving build), sorted by start, id, kind. */
export function auditDepegHistory(
  events: AuditEvent[],
  published: PublishedEvent[],
  filters: AuditFilters,
): { eventsAudited: number; findings: AuditFinding[]; splitChains: number[][] } {
  const sym = filters.symbol?.toLowerCase() ?? null;
  const chosen = events
    .filter((e) => sym === null || e.symbol.toLowerCase() === sym)
    .sort((a, b) => a.stablecoinId.localeCompare(b.stablecoinId) || a.startedAt - b.startedAt || a.id - b.id);
  const findings: AuditFinding[] = [];
  const at = (e: PublishedEvent) => ({
    eventId: e.id,
    stablecoinId: e.stablecoinId,
    symbol: e.symbol,
    startedAt: e.startedAt,
  });
  const threshold = Math.max(filters.minSupply, SUPPLY_FLOOR_USD);
  for (const e of chosen) {
    const peak = Math.abs(e.peakDeviationBps);
    if (e.peakFamilies <= 1 && (e.otherSlotsMaxBps === null || Math.abs(e.otherSlotsMaxBps) < peak * LONE_PEAK_RATIO))
      findings.push({
        kind: "lone-print-peak",
        ...at(e),
        detail: {
          peakDeviationBps: e.peakDeviationBps,
          otherSlotsMaxBps: e.otherSlotsMaxBps,
          peakFamilies: e.peakFamilies,
        },
      });
    if (e.supplyUsdAtStart === null) findings.push({ kind: "unknown-supply", ...at(e), detail: {} });
    else if (e.supplyUsdAtStart < threshold)
      findings.push({
        kind: "small-supply",
        ...at(e),
        detail: { supplyUsdAtStart: e.supplyUsdAtStart, thresholdUsd: threshold },
      });
  }
  // synthetic splits: chains of consecutive incidents of one coin and direction
  const splitChains: number[][] = [];
  const byKey = new Map<string, AuditEvent[]>();
  for (const e of chosen) {
    const k = `${e.stablecoinId}|${e.direction}`;
    const list = byKey.get(k);
    if (list) list.push(e);
    else byKey.set(k, [e]);
  }
  for (const list of byKey.values()) {
    let chain: AuditEvent[] = [];
    const close = () => {
      if (chain.length > 1) {
        splitChains.push(chain.map((c) => c.id));
        const gaps = chain.slice(1).map((c, i) => c.startedAt - (chain[i].endedAt ?? c.startedAt));
        findings.push({
          kind: "synthetic-split",
          ...at(chain[0]),
          detail: { eventIds: chain.map((c) => c.id), gapsSec: gaps },
        });
      }
      chain = [];
    };
    for (const e of list) {
      const prev = chain.at(-1);
      if (prev && !(prev.endedAt !== null && e.startedAt - prev.endedAt <= SPLIT_GAP_SEC)) close();
      chain.push(e);
    }
    close();
  }
  const produced = new Set(events.map((e) => e.id));
  for (const p of published)
    if (!produced.has(p.id) && (sym === null || p.symbol.toLowerCase() === sym))
      findings.push({ kind: "not-reproduced", ...at(p), detail: {} });
  findings.sort((a, b) => a.startedAt - b.startedAt || a.eventId - b.eventId || a.kind.localeCompare(b.kind));
  return { eventsAudited: chosen.length, findings, splitChains };
}

/** The audit's methodology block (versions and thresholds), for the job's answer. */
export const auditMethodology = (minSupply: number) => ({
  version: DEPEG_AUDIT_VERSION,
  depegVersion: DEPEG_METHODOLOGY_VERSION,
  splitGapSec: SPLIT_GAP_SEC,
  lonePeakRatio: LONE_PEAK_RATIO,
  supplyThresholdUsd: Math.max(minSupply, SUPPLY_FLOOR_USD),
});
