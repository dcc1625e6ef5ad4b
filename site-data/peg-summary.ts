import { z } from "zod";
import { changelogPathOf } from "../pipelines/analytics/changelogs.ts";
import { type Artifact, num, requiredNum, sqlFile } from "./contract.ts";

/** Methodology object (spec 2.5): versions, changelog link, as-of, whether the row used the current version. */
export const MethodologySchema = z.object({
  version: z.string(),
  versionLabel: z.string(),
  currentVersion: z.string(),
  currentVersionLabel: z.string(),
  changelogPath: z.string(),
  asOf: z.number().int(),
  isCurrent: z.boolean(),
});

/**
 * Builds the methodology object of the current version `version` (label `label`) as of `asOf`
 * (Unix s). `changelogPath` is the relative URL of the version's changelog
 * (`/methodology/<analytic>.md`, pipelines/analytics/changelogs.ts). Throws when no changelog
 * describes `version`.
 */
export function methodology(version: string, label: string, asOf: number): z.infer<typeof MethodologySchema> {
  return {
    version,
    versionLabel: label,
    currentVersion: version,
    currentVersionLabel: label,
    changelogPath: changelogPathOf(version),
    asOf,
    isCurrent: true,
  };
}

/**
 * Last 90 days: time at peg over the observed (priced) days (%), incidents, threshold crossings;
 * `observedDays` priced UTC days of the 90, `coveragePct` their share (%); `coverageLimited` when
 * tracking began inside the window or under 90% of its days were observed.
 */
const Recent90dSchema = z.object({
  pegPct: z.number().nullable(),
  incidentCount: z.number().int(),
  thresholdCrossingCount: z.number().int(),
  coverageLimited: z.boolean(),
  observedDays: z.number().int().nullable(),
  coveragePct: z.number().nullable(),
});

/** Days of the peg score's 4-year window (4 × 365.25, rounded up). */
const WINDOW_DAYS = Math.ceil(4 * 365.25);

/**
 * History coverage of the 4-year window from the observed (priced) UTC days: `full` ≥ 95% of the
 * window's days, `partial` ≥ 30 days, `early` 7-29 days, `insufficient` < 7 days.
 */
export function historyCoverage(pricedDays: number): "full" | "partial" | "early" | "insufficient" {
  return pricedDays >= 0.95 * WINDOW_DAYS
    ? "full"
    : pricedDays >= 30
      ? "partial"
      : pricedDays >= 7
        ? "early"
        : "insufficient";
}

/** One coin of `/api/peg-summary`: peg score (0-100) and its parts, reference evidence, recent metrics. */
export const PegSummaryCoinSchema = z.object({
  id: z.string(),
  symbol: z.string(),
  name: z.string(),
  pegType: z.string(),
  pegCurrency: z.string(),
  pegMechanism: z.string(),
  /** Current consensus deviation from the peg reference, bps (null without price or usable reference). */
  currentDeviationBps: z.number().int().nullable(),
  pegScore: z.number().int().min(0).max(100).nullable(),
  /**
   * Why pegScore is null (else null): `nav-token` (price follows a NAV, not judged against par),
   * `floating-peg` (no fixed target), `no-price`, `no-current-price`, `insufficient-history` (< 30 priced days).
   */
  pegScoreUnavailableReason: z
    .enum(["nav-token", "floating-peg", "no-price", "no-current-price", "insufficient-history"])
    .nullable(),
  pegPct: z.number().nullable(),
  severityScore: z.number().nullable(),
  spreadPenalty: z.number(),
  activePenalty: z.number(),
  eventCount: z.number().int(),
  worstDeviationBps: z.number().int().nullable(),
  activeDepeg: z.boolean(),
  lastEventAt: z.number().int().nullable(),
  trackingSpanDays: z.number().int(),
  observationStartedAt: z.number().int().nullable(),
  /** From the priced UTC days of the 4-year window: `full` (≥ 95% of its 1,461 days), `partial` (≥ 30), `early` (7-29), `insufficient` (< 7). */
  historyCoverage: z.enum(["full", "partial", "early", "insufficient"]),
  /** Priced UTC days in the 4-year window. */
  pricedDays: z.number().int(),
  /** Share of the 4-year window's days that were priced (%). */
  historyCoveragePct: z.number(),
  referenceEvidence: z.object({
    price: z.number().nullable(),
    priceConfidence: z.enum(["high", "single-source", "low", "fallback"]).nullable(),
    pegReference: z.number().nullable(),
    /** `par` (USD), `fx` (ECB rate ≤ 4 days old), `median` (≥ 3 same-peg peers), `fx-fallback` (stale, not judged), `missing`. */
    referenceSource: z.string().nullable(),
  }),
  recent90d: Recent90dSchema,
  methodologyVersion: z.string(),
});

export const PegSummaryPayloadSchema = z.object({
  coins: z.array(PegSummaryCoinSchema),
  summary: z.object({
    activeDepegCount: z.number().int(),
    medianDeviationBps: z.number().int().nullable(),
    worstCurrent: z.object({ id: z.string(), symbol: z.string(), bps: z.number().int() }).nullable(),
    coinsAtPeg: z.number().int(),
    totalTracked: z.number().int(),
    depegEventsToday: z.number().int(),
    depegEventsYesterday: z.number().int(),
    fallbackPegRates: z.record(z.string(), z.number()),
  }),
  methodology: MethodologySchema,
});

const THRESHOLD = (pegType: string) => (pegType === "peggedUSD" ? 100 : 150);

/** `site-data/peg-summary.json` — peg scores of every listed coin and the aggregate peg picture. */
export const pegSummaryArtifact: Artifact = {
  key: "peg-summary",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  schema: PegSummaryPayloadSchema,
  outputs: { main: { path: "site-data/peg-summary.json", schema: PegSummaryPayloadSchema } },
  description: "Per-coin peg scores, reference evidence and recent metrics; aggregate summary.",
  queries: {
    coins: sqlFile(import.meta.url, "peg_scores"),
    days: sqlFile(import.meta.url, "peg_event_days"),
    fallback: sqlFile(import.meta.url, "peg_fallback_rates"),
  },
  assemble(rows, ctx) {
    const coins = rows.coins.map((r) => {
      const span = num(r.tracking_span_days) ?? 0;
      const priced = num(r.priced_days) ?? 0;
      return {
        id: String(r.stablecoin_id),
        symbol: String(r.symbol),
        name: String(r.name),
        pegType: String(r.peg_type),
        pegCurrency: String(r.peg_currency),
        pegMechanism: String(r.peg_mechanism),
        currentDeviationBps: num(r.current_deviation_bps),
        pegScore: num(r.peg_score),
        pegScoreUnavailableReason: (r.peg_score_unavailable_reason ?? null) as
          | "nav-token"
          | "floating-peg"
          | "no-price"
          | "no-current-price"
          | "insufficient-history"
          | null,
        pegPct: num(r.peg_pct),
        severityScore: num(r.severity_score),
        spreadPenalty: num(r.spread_penalty) ?? 0,
        activePenalty: num(r.active_penalty) ?? 0,
        eventCount: num(r.event_count) ?? 0,
        worstDeviationBps: num(r.worst_deviation_bps),
        activeDepeg: Boolean(r.active_depeg),
        lastEventAt: num(r.last_event_at),
        trackingSpanDays: span,
        observationStartedAt: num(r.observation_started_at),
        historyCoverage: historyCoverage(priced),
        pricedDays: priced,
        historyCoveragePct: Math.round((priced / WINDOW_DAYS) * 10000) / 100,
        referenceEvidence: {
          price: num(r.price),
          priceConfidence: (r.price_confidence ?? null) as "high" | "single-source" | "low" | "fallback" | null,
          pegReference: num(r.peg_reference),
          referenceSource: (r.reference_source ?? null) as string | null,
        },
        recent90d: JSON.parse(String(r.recent90d_json)),
        methodologyVersion: String(r.methodology_version),
      };
    });
    const withDev = coins.filter(
      (c): c is (typeof coins)[number] & { currentDeviationBps: number } => c.currentDeviationBps !== null,
    );
    const abs = withDev.map((c) => Math.abs(c.currentDeviationBps)).sort((a, b) => a - b);
    const median = abs.length
      ? Math.round(abs.length % 2 ? abs[abs.length >> 1] : (abs[abs.length / 2 - 1] + abs[abs.length / 2]) / 2)
      : null;
    const worst = withDev.reduce<(typeof withDev)[number] | null>(
      (w, c) => (!w || Math.abs(c.currentDeviationBps) > Math.abs(w.currentDeviationBps) ? c : w),
      null,
    );
    const payload = {
      coins,
      summary: {
        activeDepegCount: coins.filter((c) => c.activeDepeg).length,
        medianDeviationBps: median,
        worstCurrent: worst ? { id: worst.id, symbol: worst.symbol, bps: worst.currentDeviationBps } : null,
        coinsAtPeg: withDev.filter((c) => Math.abs(c.currentDeviationBps) < THRESHOLD(c.pegType)).length,
        totalTracked: withDev.length,
        depegEventsToday: num(rows.days[0]?.today) ?? 0,
        depegEventsYesterday: num(rows.days[0]?.yesterday) ?? 0,
        fallbackPegRates: Object.fromEntries(
          rows.fallback.map((r) => [String(r.peg_type), requiredNum(r.reference_usd, "peg fallback reference_usd")]),
        ),
      },
      methodology: methodology(
        String(rows.coins[0]?.methodology_version ?? "ballast-peg-score-v3"),
        "Peg score v3 (4-year window, observed days only)",
        ctx.asOf,
      ),
    };
    return {
      files: [{ path: pegSummaryArtifact.outputs.main.path, payload, rows: coins.length }],
      dataAsOf: ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
    };
  },
};
